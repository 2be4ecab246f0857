# Loads devread.c's library (path: argv[1]) into a process where torch made
# its CUDA context, and runs it with the GIL held (ctypes.PyDLL).
import ctypes, sys, torch
x = torch.ones(4, device="cuda"); torch.cuda.synchronize()
lib = ctypes.PyDLL(sys.argv[1])
print("rc", lib.run())
