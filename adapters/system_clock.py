"""The Clock port on the operating system's wall clock."""

import time


class SystemClock:
    def now(self) -> float:
        return time.time()
