"""The garbage collector, settled once the server is built and before it serves (ADR 0039)."""

import gc

# Net allocations between two youngest-generation collections (CPython's default is 700). A call
# keeps a few thousand objects alive at once, mostly freed by reference counting, so 700 made
# about one collection per four calls; 7,000 makes one per few hundred (docs/adr/0039).
YOUNG_COLLECTION_THRESHOLD = 7_000


def pause() -> bool:
    """While the server is imported and built: no collection at all (ADR 0053). Start-up makes
    hundreds of thousands of objects that all live as long as the process; the collector walked
    them again and again (hundreds of young and several full collections), about a tenth of the
    time from spawn to the first answer. `settle()` turns it back on. Returns whether it was on."""
    enabled = gc.isenabled()
    gc.disable()
    return enabled


def settle() -> None:
    """Before serving: hide every object start-up made (modules, the catalogue, schemas, the app)
    from the garbage collector, since they live as long as the process and a full collection that
    walked them all paused every session at once; and collect the youngest generation less often."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, older, oldest)
    gc.enable()
