"""An independent cube model for checking answers: 54 stickers moved by rotating 3-D vectors.

Nothing here comes from cubefleet's own model (`tables/`): each sticker is a cubie position in
{-1, 0, 1}^3 and an outward normal; a face turn rotates the stickers of the layer whose position
has +1 along the face's axis by 90 degrees clockwise as seen from outside that face. Axes: x to R,
y to U, z to F (right-handed, so looking at F, U is up and R is right). A state is solved when each
sticker shows the colour of the face its normal points to.
"""
import random

FACES = {"U": (0, 1, 0), "D": (0, -1, 0), "R": (1, 0, 0), "L": (-1, 0, 0),
         "F": (0, 0, 1), "B": (0, 0, -1)}
FACE_OF = {v: k for k, v in FACES.items()}


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _clockwise(d, v):
    """v turned by -90 degrees about the unit axis d (clockwise seen from the tip of d)."""
    c = _cross(d, v)
    k = _dot(d, v)
    return tuple(-c[i] + d[i] * k for i in range(3))


STICKERS = []  # (position, normal), 54 of them
for normal in FACES.values():
    axis = [i for i in range(3) if normal[i]][0]
    others = [i for i in range(3) if i != axis]
    for a in (-1, 0, 1):
        for b in (-1, 0, 1):
            pos = [0, 0, 0]
            pos[axis] = normal[axis]
            pos[others[0]], pos[others[1]] = a, b
            STICKERS.append((tuple(pos), normal))
INDEX = {s: i for i, s in enumerate(STICKERS)}
assert len(INDEX) == 54


def _quarter_turn(face):
    """perm[i] = where the sticker at i goes by one clockwise quarter turn of `face`."""
    d = FACES[face]
    perm = []
    for pos, normal in STICKERS:
        if _dot(pos, d) == 1:
            perm.append(INDEX[(_clockwise(d, pos), _clockwise(d, normal))])
        else:
            perm.append(INDEX[(pos, normal)])
    return perm


QUARTER = {f: _quarter_turn(f) for f in FACES}
SUFFIX_TURNS = {"": 1, "2": 2, "'": 3}


def solved():
    return [FACE_OF[n] for _, n in STICKERS]


def apply(state, moves):
    """The state after the moves (`R U2 F'` notation, whitespace separated)."""
    state = list(state)
    for tok in moves.split():
        face, suffix = tok[0], tok[1:]
        if face not in QUARTER or suffix not in SUFFIX_TURNS:
            raise ValueError(f"not a face turn: {tok!r}")
        perm = QUARTER[face]
        for _ in range(SUFFIX_TURNS[suffix]):
            new = [None] * 54
            for i, j in enumerate(perm):
                new[j] = state[i]
            state = new
    return state


def is_solved(state):
    return all(state[i] == FACE_OF[n] for i, (_, n) in enumerate(STICKERS))


def solves(scramble, solution):
    """True when `solution` applied after `scramble` gives the solved cube."""
    return is_solved(apply(solved(), scramble + " " + solution))


def scrambles(seed, count, length):
    """`count` random move sequences of `length` turns, no face turned twice in a row and no
    opposite faces in the order D-U, L-R, B-F (so they do not cancel), from a seeded generator."""
    rng = random.Random(seed)
    opposite_first = {"D": "U", "L": "R", "B": "F"}
    out = []
    for _ in range(count):
        seq, last = [], None
        while len(seq) < length:
            f = rng.choice("URFDLB")
            if f == last or opposite_first.get(last) == f:
                continue
            seq.append(f + rng.choice(["", "2", "'"]))
            last = f
        out.append(" ".join(seq))
    return out


def self_test():
    """The model against facts that hold for any correct model."""
    s = solved()
    assert is_solved(s)
    for f in FACES:
        assert not is_solved(apply(s, f))
        assert is_solved(apply(s, f + " " + f + "'"))
        assert is_solved(apply(s, f + "2 " + f + "2"))
    assert is_solved(apply(s, " ".join(["R U R' U'"] * 6)))          # sexy move has order 6
    assert not is_solved(apply(s, " ".join(["R U R' U'"] * 3)))
    assert is_solved(apply(s, " ".join(["R U"] * 105)))              # R U has order 105
    assert not is_solved(apply(s, " ".join(["R U"] * 35)))
    assert is_solved(apply(s, " ".join(["R U'"] * 63)))             # R U' has order 63
    # the superflip and its published 20-move solution
    superflip = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
    flipped = apply(s, superflip)
    assert not is_solved(flipped)
    assert all(flipped[i] == FACE_OF[n] for i, (p, n) in enumerate(STICKERS)
               if sum(map(abs, p)) != 2), "the superflip moves only edge stickers"
    assert is_solved(apply(flipped, superflip))                      # it is its own inverse
    # a scramble, undone by its inverse, and not by the inverse less one turn
    seq = scrambles(1, 1, 25)[0]
    inv = " ".join(t[0] + {"": "'", "'": "", "2": "2"}[t[1:]] for t in reversed(seq.split()))
    assert solves(seq, inv)
    assert not solves(seq, " ".join(inv.split()[:-1]))


self_test()
