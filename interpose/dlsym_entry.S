/* trlat's dlsym. glibc decides what RTLD_NEXT (and RTLD_DEFAULT, in a
 * dlmopen namespace) means from the caller's return address, so this entry
 * must never become the caller: it asks trlat_dlsym_filter (C) whether the
 * lookup is one trlat answers (a wrapped name on a libcuda handle), and
 * otherwise tail-jumps into glibc's dlsym with the caller's return address
 * still on the stack. */
#if defined(__x86_64__)
    .text
    .globl  dlsym
    .type   dlsym, @function
    .p2align 4
dlsym:
    .cfi_startproc
    cmpq    $-1, %rdi               /* RTLD_NEXT: straight to glibc */
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
    ret
2:
    movq    trlat_glibc_dlsym(%rip), %rax
    testq   %rax, %rax
    jz      3f
    jmp     *%rax
3:  /* first call ever, before trlat resolved glibc's dlsym */
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
    movq    trlat_glibc_dlsym(%rip), %rax
    testq   %rax, %rax
    jz      4f
    jmp     *%rax
4:
    xorl    %eax, %eax
    ret
    .cfi_endproc
    .size   dlsym, .-dlsym

#elif defined(__aarch64__)
    .text
    .globl  dlsym
    .type   dlsym, %function
    .p2align 4
dlsym:
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
    mov     x0, x2
    ret
2:
    adrp    x16, trlat_glibc_dlsym
    ldr     x16, [x16, :lo12:trlat_glibc_dlsym]
    cbz     x16, 3f
    br      x16
3:
    stp     x29, x30, [sp, #-32]!
    mov     x29, sp
    stp     x0, x1, [sp, #16]
    bl      trlat_resolve_glibc_dlsym
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    adrp    x16, trlat_glibc_dlsym
    ldr     x16, [x16, :lo12:trlat_glibc_dlsym]
    cbz     x16, 4f
    br      x16
4:
    mov     x0, #0
    ret
    .size   dlsym, .-dlsym
#else
#error "trlat's dlsym entry is written for x86-64 and aarch64"
#endif
    .section .note.GNU-stack,"",@progbits
