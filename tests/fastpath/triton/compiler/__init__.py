from .compiler import ASTSource, CompiledKernel  # noqa: F401
