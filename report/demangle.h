/* C++ kernel names made readable at report time, when the process has a C++
 * runtime's __cxa_demangle (PyTorch's processes do). */
#ifndef TRLAT_DEMANGLE_H
#define TRLAT_DEMANGLE_H

/* A malloc'd demangled copy of an Itanium-mangled name, or NULL (not
 * mangled, no demangler in the process, or not demangleable). */
char *trlat_demangle(const char *name);

#endif
