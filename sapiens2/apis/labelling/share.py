"""Which inputs a rank labels: a deterministic share of the items still to do."""
from typing import List, Sequence, TypeVar

T = TypeVar('T')


def rank_share(items: Sequence[T], rank: int, world_size: int) -> List[T]:
    """Every ``world_size``-th item from position ``rank`` (round-robin over ``items`` in their given order).

    The caller passes the items still to do in a stable order (sorted input listing, minus the items the ledgers
    record as done), so that the same command on the same inputs gives every rank the same share, the shares are
    disjoint, cover every item and differ in length by at most one, and a rerun after a lost rank spreads that rank's
    unfinished items over all ranks.
    """
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f'rank {rank} of a world of {world_size}: the rank must be in [0, {world_size})')
    return list(items[rank::world_size])
