"""A naive cube for checking answers: 54 stickers, each a (position, normal) pair of integer
vectors, turned by rotating vectors. It shares no code with cubefleet, so an answer it accepts
was not accepted by cubefleet's own model."""

from __future__ import annotations

from typing import Dict, Tuple

Vec = Tuple[int, int, int]

#: each face's outward normal
FACES: Dict[str, Vec] = {
    "U": (0, 1, 0),
    "D": (0, -1, 0),
    "R": (1, 0, 0),
    "L": (-1, 0, 0),
    "F": (0, 0, 1),
    "B": (0, 0, -1),
}


def _dot(a: Vec, b: Vec) -> int:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _quarter(n: Vec, v: Vec) -> Vec:
    """`v` turned a quarter clockwise as seen from outside the face whose normal is `n`
    (-90 degrees about `n`): v' = n (n.v) - n x v."""
    c = _cross(n, v)
    k = _dot(n, v)
    return (n[0] * k - c[0], n[1] * k - c[1], n[2] * k - c[2])


class Cube:
    """Stickers by (position, normal), each holding the normal it had when solved."""

    def __init__(self) -> None:
        self.stickers: Dict[Tuple[Vec, Vec], Vec] = {}
        for n in FACES.values():
            for a in (-1, 0, 1):
                for b in (-1, 0, 1):
                    # the sticker's position: 1 along the normal, a and b along the others
                    free = [i for i in range(3) if n[i] == 0]
                    p = list(n)
                    p[free[0]], p[free[1]] = a, b
                    self.stickers[(tuple(p), n)] = n

    def turn(self, face: str, quarters: int) -> None:
        n = FACES[face]
        for _ in range(quarters % 4):
            moved = {}
            for (p, normal), colour in self.stickers.items():
                if _dot(p, n) == 1:
                    moved[(_quarter(n, p), _quarter(n, normal))] = colour
                else:
                    moved[(p, normal)] = colour
            self.stickers = moved

    def apply(self, moves: str) -> "Cube":
        """Applies face turns written `U`, `U2`, `U'` separated by spaces."""
        for m in moves.split():
            q = {"": 1, "2": 2, "'": 3, "2'": 2}[m[1:]]
            self.turn(m[0], q)
        return self

    def solved(self) -> bool:
        return all(colour == normal for (_, normal), colour in self.stickers.items())


def solves(scramble: str, solution: str) -> bool:
    """True when `solution` solves the position `scramble` (face turns) reaches."""
    return Cube().apply(scramble).apply(solution).solved()


def reaches(scramble: str, solution: str, target: str) -> bool:
    """True when `solution` takes the position `scramble` reaches to the one `target` reaches
    (all face turns): every sticker where the target has it."""
    return Cube().apply(scramble).apply(solution).stickers == Cube().apply(target).stickers


def has_cross(scramble: str, solution: str, face: str = "D") -> bool:
    """True when `solution` takes the position `scramble` reaches to one whose cross on `face`
    is solved: each edge of that face (a position with `face`'s coordinate and one 0) shows its
    own colours."""
    cube = Cube().apply(scramble).apply(solution)
    n = FACES[face]
    axis = next(i for i in range(3) if n[i] != 0)
    return all(
        colour == normal
        for (p, normal), colour in cube.stickers.items()
        if p[axis] == n[axis] and sum(1 for x in p if x == 0) == 1
    )
