/* trlat's dlsym. glibc decides what RTLD_NEXT (and RTLD_DEFAULT, in a
 * dlmopen namespace) means from the caller's return address, so this entry
 * must never become the caller: it asks trlat_dlsym_filter (C) whether the
 * lookup is one trlat answers (a wrapped name on a libcuda handle), and
 * otherwise tail-jumps, with the caller's return address still on the
 * stack, into the next dlsym: the one the program would reach without
 * trlat (another preloaded library's that wraps dlsym, or glibc's). The
 * filter returns 0 for "not mine", 1 for "the next dlsym answered NULL"
 * (asked once: a wrapper after trlat sees each lookup once), else the
 * answer.
 *
 * Exported under glibc's own versions of dlsym (exports.map), so that a
 * library preloaded before trlat that finds "the real dlsym" with
 * dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34") (or the older version) gets
 * trlat's, as glibc's own lookup order says it should. */
#if defined(__x86_64__)
    .text
    .globl  trlat_dlsym_entry
    .hidden trlat_dlsym_entry
    .type   trlat_dlsym_entry, @function
    .p2align 4
trlat_dlsym_entry:
    .cfi_startproc
    cmpq    $-1, %rdi               /* RTLD_NEXT: straight to the next dlsym */
    je      2f
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp                /* 16-byte alignment for the call */
    .cfi_adjust_cfa_offset 8
    call    trlat_dlsym_filter
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testq   %rax, %rax
    jz      2f
    cmpq    $1, %rax
    jne     1f
    xorl    %eax, %eax
1:
    ret
2:
    movq    trlat_next_dlsym(%rip), %rax
    testq   %rax, %rax
    jz      3f
    jmp     *%rax
3:  /* first call ever, before trlat resolved the next dlsym */
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    call    trlat_resolve_glibc_dlsym
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    movq    trlat_next_dlsym(%rip), %rax
    testq   %rax, %rax
    jz      4f
    jmp     *%rax
4:
    xorl    %eax, %eax
    ret
    .cfi_endproc
    .size   trlat_dlsym_entry, .-trlat_dlsym_entry
#define FUNCTION @function

#elif defined(__aarch64__)
    .text
    .globl  trlat_dlsym_entry
    .hidden trlat_dlsym_entry
    .type   trlat_dlsym_entry, %function
    .p2align 4
trlat_dlsym_entry:
    cmn     x0, #1                  /* RTLD_NEXT */
    b.eq    2f
    stp     x29, x30, [sp, #-32]!
    mov     x29, sp
    stp     x0, x1, [sp, #16]
    bl      trlat_dlsym_filter
    mov     x2, x0
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    cbz     x2, 2f
    cmp     x2, #1
    csel    x0, xzr, x2, eq
    ret
2:
    adrp    x16, trlat_next_dlsym
    ldr     x16, [x16, :lo12:trlat_next_dlsym]
    cbz     x16, 3f
    br      x16
3:
    stp     x29, x30, [sp, #-32]!
    mov     x29, sp
    stp     x0, x1, [sp, #16]
    bl      trlat_resolve_glibc_dlsym
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    adrp    x16, trlat_next_dlsym
    ldr     x16, [x16, :lo12:trlat_next_dlsym]
    cbz     x16, 4f
    br      x16
4:
    mov     x0, #0
    ret
    .size   trlat_dlsym_entry, .-trlat_dlsym_entry
#define FUNCTION %function
#else
#error "trlat's dlsym entry is written for x86-64 and aarch64"
#endif

/* The exported names: dlsym@@GLIBC_2.34 (the default) and the architecture's
 * older dlsym, both this entry (their labels stay local: exports.map). */
    .globl  trlat_dlsym_v34
    .type   trlat_dlsym_v34, FUNCTION
    .set    trlat_dlsym_v34, trlat_dlsym_entry
    .symver trlat_dlsym_v34, dlsym@@GLIBC_2.34
    .globl  trlat_dlsym_old
    .type   trlat_dlsym_old, FUNCTION
    .set    trlat_dlsym_old, trlat_dlsym_entry
#if defined(__x86_64__)
    .symver trlat_dlsym_old, dlsym@GLIBC_2.2.5
#else
    .symver trlat_dlsym_old, dlsym@GLIBC_2.17
#endif
    .section .note.GNU-stack,"",@progbits
