class constexpr:
    """tl.constexpr (language/core.py): an annotation, and a value wrapper."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"constexpr[{self.value}]"


class dtype:
    """tl.dtype (language/core.py): what a kernel's dtype constexpr is given;
    str() is its name, as Triton's cache key writes it."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    __repr__ = __str__


float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = "fp32"
int32 = "i32"
int64 = "i64"


def _unwrap_if_constexpr(o):
    return o.value if isinstance(o, constexpr) else o
