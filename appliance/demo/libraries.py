"""The widget libraries real sites ship, for the library demo pages: pinned npm packages.

Each :class:`Library` is one npm package at an exact version whose tarball's sha256 is
pinned here (versions and licences looked up in ``shared/WIDGETS.md``). ``fetch`` (run by
``scripts/install.sh``, like the models) downloads each tarball with ``npm pack``, checks the
sha256, and unpacks it into ``<cache>/widgets/NAME@VERSION/`` (the package's own files,
licence included); nothing is downloaded at run time. :class:`~appliance.demo.site.DemoSite`
serves a package's files at ``/lib/NAME/PATH`` (e.g. ``/lib/select2/dist/js/select2.min.js``),
so each page loads the library exactly as a site that bundles it would — never from a CDN.

The cache lives next to the models: ``${APPLIANCE_MODELS:-~/.cache/appliance/models}/../widgets``.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from appliance.errors import ApplianceError
from appliance.models import models_dir


class LibraryError(ApplianceError, RuntimeError):
    """A widget library is missing from the cache, or its tarball has the wrong sha256."""


@dataclass(frozen=True)
class Library:
    """One npm package: ``name`` as npm spells it, exact ``version``, the sha256 of the
    tarball ``npm pack NAME@VERSION`` gives, and its licence (SPDX, as its package says)."""

    name: str
    version: str
    sha256: str
    licence: str

    @property
    def root(self) -> Path:
        """Where the package's files are unpacked (its ``package/`` folder's content)."""
        return cache_dir() / f"{self.name.replace('/', '+')}@{self.version}"


LIBRARIES: dict[str, Library] = {
    lib.name: lib
    for lib in (
        Library("jquery", "3.7.1", "68a9f787516da47c680e09c187bcbac4536b6f85d90eb882844e12919e583f53", "MIT"),
        Library("select2", "4.1.0", "d7bfef80ad52fc9585ac04621dc4df11d6eb60c2bbc3986085dd94795eb8e4a6", "MIT"),
        Library(
            "tom-select", "2.6.2", "91e3a429b42d9163e8ade96f3603109d3b7faa7f9b1a5259fa30f8f4b162415a", "Apache-2.0"
        ),
        Library("choices.js", "11.2.4", "ce0edabaeeea6559f778056a7e66d1b472170b4b606de314e23450bbe9ff2806", "MIT"),
        Library("jquery-ui", "1.14.2", "8f021edc451532d858f438eff47780b646df4fb36d2a7232eedb35c38bc6a244", "MIT"),
        Library("flatpickr", "4.6.13", "912da5a92aea3447d39ab83d83706c004c999ee9b013a6267fab3d8710e8a7a8", "MIT"),
        Library("intl-tel-input", "29.5.1", "ed62816e15bc748f0f022e8ca5c79d6336e8c2c390144da40366706d70c08945", "MIT"),
        Library("imask", "7.6.1", "0f43fce2acc12826b672cdf2e19676362f633b3a3813c6b963d59fc8c751b2fe", "MIT"),
        Library("cleave.js", "1.6.0", "3abe1127b8b1d1a1e5ea18f442fffe9e1160bef6d1c519befd9f5baaf2ed6cdf", "Apache-2.0"),
        Library("react", "18.3.1", "8d9bed01a672e7eaf387942d781ad47c6a43089a30a0306060f9fd5ac7870347", "MIT"),
        Library("react-dom", "18.3.1", "031d4427a99f2f3f6cac18bbbf308594a67e4f47d10f4896fdec446505b040e0", "MIT"),
        Library("bootstrap", "5.3.9", "06bdf78289c3c12ea99d40df84eedf6278c724c73eebf38f11f3a65b44ec8c94", "MIT"),
        Library("govuk-frontend", "6.6.0", "52c4eb554e54d8a6e4ba801e9da5ec3a5b930fd2f117a39677f0b6296e954751", "MIT"),
        Library(
            "@uswds/uswds",
            "3.14.0",
            "da91c65e6fc736fa397f0daf6ca2c2c95711506d85c7ad2537a4570725401e1c",
            "SEE LICENSE IN LICENSE.md",
        ),
    )
}


def cache_dir() -> Path:
    """``<models cache>/../widgets`` (see :func:`appliance.models.models_dir`)."""
    return models_dir().parent / "widgets"


def file_of(name: str, path: str) -> Path:
    """The unpacked file ``path`` of library ``name``.

    Raises:
        LibraryError: ``name`` is not pinned here, the library is not fetched, or ``path``
            leaves its folder or is not a file (names which, and the fix).
    """
    lib = LIBRARIES.get(name)
    if lib is None:
        raise LibraryError(f"no widget library {name!r}; pinned: {', '.join(LIBRARIES)}")
    if not lib.root.is_dir():
        raise LibraryError(
            f"widget library {name}@{lib.version} is not fetched into {lib.root} "
            "(run `bash scripts/install.sh` or `.venv/bin/python -m appliance.demo.libraries fetch`)"
        )
    p = (lib.root / path).resolve()
    if not p.is_relative_to(lib.root.resolve()) or not p.is_file():
        raise LibraryError(f"{name}@{lib.version} has no file {path!r}")
    return p


def _sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def fetch_library(lib: Library, log=print) -> None:
    """Download ``lib``'s tarball (``npm pack``), check its sha256 and unpack it; skip when
    already unpacked.

    Raises:
        LibraryError: the tarball's sha256 differs from the pinned one (nothing is unpacked).
        subprocess.CalledProcessError: npm could not download the package.
    """
    if lib.root.is_dir():
        return
    log(f"  {lib.name}@{lib.version}")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["npm", "pack", "--silent", "--pack-destination", tmp, f"{lib.name}@{lib.version}"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (tarball,) = Path(tmp).glob("*.tgz")
        digest = _sha256(tarball)
        if digest != lib.sha256:
            raise LibraryError(f"sha256 mismatch for {lib.name}@{lib.version}: got {digest}, expected {lib.sha256}")
        out = Path(tmp) / "out"
        with tarfile.open(tarball) as t:
            t.extractall(out, filter="data")
        part = lib.root.with_name(lib.root.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        part.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(out / "package"), part)
        part.rename(lib.root)


def fetch(log=print) -> None:
    """Fetch every pinned library."""
    for lib in LIBRARIES.values():
        fetch_library(lib, log)
    log(f"widget libraries ready in {cache_dir()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m appliance.demo.libraries", description=__doc__)
    ap.add_argument("cmd", choices=["fetch"])
    ap.parse_args(argv)
    try:
        fetch()
    except LibraryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
