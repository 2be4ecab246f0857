# runtime/_allocation.py (3.6): the allocator a kernel's scratch memory
# comes from, a ContextVar set by triton.set_allocator.
from contextvars import ContextVar


class NullAllocator:

    def __call__(self, size, alignment, stream):
        raise RuntimeError("Kernel requires a runtime memory allocation, but no allocator was set.")


_allocator = ContextVar("_allocator", default=NullAllocator())


def set_allocator(allocator):
    _allocator.set(allocator)
