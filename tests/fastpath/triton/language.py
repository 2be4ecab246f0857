class constexpr:
    """tl.constexpr (language/core.py): an annotation, and a value wrapper."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"constexpr[{self.value}]"


float32 = "fp32"
int32 = "i32"
int64 = "i64"


def _unwrap_if_constexpr(o):
    return o.value if isinstance(o, constexpr) else o
