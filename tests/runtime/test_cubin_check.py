"""Every cubin the launcher writes is a whole ELF file that ``nvdisasm`` reads; damaged,
truncated (cache format 1) or foreign entries of the disk cache are never loaded; a carried
cubin of another NVRTC of the same major version is reused, and compiled again here when the
driver refuses it."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC

from infini_cupy import config  # noqa: E402
from infini_cupy.runtime import cuda, elf  # noqa: E402
from infini_cupy.runtime.nvrtc import NVRTC_OPTIONS, compile_program, nvrtc_version  # noqa: E402
from infini_cupy.runtime.sources import expanded_source  # noqa: E402
from tests.runtime.test_cuda_launcher import COPY, _launch_copy  # noqa: E402
from tests.support import cupy_standin  # noqa: E402

# One variant of each kernel family; the tiled copy is where the short cubin was first seen.
SAMPLE = [("rearrange.cu", COPY), ("transpose.cu", "tiled_copy<4, 1, 1, 0, 0>"),
          ("packed.cu", "packed_copy<2, 4, 2>"), ("rearrange.cu", "rearrange_general<4>")]


def nvdisasm() -> str:
    """``nvdisasm`` as the SASS reader finds it (the test extra's wheel)."""
    from infini_cupy.readers.sass import nvdisasm as find

    try:
        return find()
    except RuntimeError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The cache folder after the launcher compiled the sample for an sm_90 device."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(config.CACHE_DIR_VAR, str(folder))
        with cupy_standin.installed(capabilities=(90,)):
            for source, name in SAMPLE:
                cuda.get_kernel(source, name)
    return sorted((folder / "cubin").glob("*.bin"))


def test_every_cubin_written_is_a_whole_elf_file(written):
    assert len(written) == len(SAMPLE)
    for path in written:
        binary = path.read_bytes()
        assert elf.problem(binary, "sm_90") is None, path
        # the program header table is the file's last part: its end is the file's size
        phoff, phentsize, phnum = (int.from_bytes(binary[o:o + n], "little")
                                   for o, n in ((32, 8), (54, 2), (56, 2)))
        assert phoff + phentsize * phnum == len(binary)


def test_nvdisasm_reads_a_written_cubin_and_refuses_it_one_byte_short(written, tmp_path):
    tool = nvdisasm()
    sample = next(p for p in written if b"tiled_copy" in p.with_suffix(".json").read_bytes())
    done = subprocess.run([str(tool), str(sample)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert ".text." in done.stdout and "EXIT" in done.stdout
    short = tmp_path / "short.cubin"
    short.write_bytes(sample.read_bytes()[:-1])  # what CuPy's getCUBIN returns
    done = subprocess.run([str(tool), str(short)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "truncated: its program header table ends" in elf.problem(short.read_bytes())


def test_the_stand_in_refuses_a_truncated_or_foreign_cubin(tmp_path):
    program = compile_program("rearrange.cu", [COPY], "sm_90")
    about = {"source": "rearrange.cu", "name": COPY, "arch": "sm_90",
             "lowered": program.lowered_names[COPY]}
    for stem, binary in (("short", program.binary[:-1]), ("whole", program.binary)):
        (tmp_path / f"{stem}.bin").write_bytes(binary)
        (tmp_path / f"{stem}.json").write_text(json.dumps(about))
    with cupy_standin.installed(capabilities=(90, 80)) as side:
        with pytest.raises(cupy_standin.CUDADriverError, match="200.*|truncated"):
            side.RawModule(path=str(tmp_path / "short.bin")).get_function(about["lowered"])
        side.RawModule(path=str(tmp_path / "whole.bin")).get_function(about["lowered"])
        with side.cuda.Device(1), pytest.raises(cupy_standin.CUDADriverError,
                                                match="built for sm_90, not sm_80"):
            side.RawModule(path=str(tmp_path / "whole.bin")).get_function(about["lowered"])


def _entry(folder: Path, stem: str, binary: bytes, about: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.bin").write_bytes(binary)
    (folder / f"{stem}.json").write_text(json.dumps(about))
    return folder / f"{stem}.bin"


@pytest.fixture
def side(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    monkeypatch.setattr(cuda, "counts", {"hits": 0, "compiles": 0})
    with cupy_standin.installed(capabilities=(90,)) as side:
        yield side


def test_entries_of_the_truncating_cache_format_are_never_read(side, tmp_path):
    """Format 1 keyed on (source, name, options, NVRTC version, arch): its short cubins stay
    where they are, and the launcher compiles its own."""
    program = compile_program("rearrange.cu", [COPY], "sm_90")
    old_stem = hashlib.sha256(repr((expanded_source("rearrange.cu"), COPY, NVRTC_OPTIONS,
                                    nvrtc_version(), "sm_90")).encode()).hexdigest()[:32]
    old = _entry(tmp_path / "cubin", old_stem, program.binary[:-1],
                 {"lowered": program.lowered_names[COPY], "source": "rearrange.cu",
                  "name": COPY, "arch": "sm_90"})
    src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    assert side.loaded_paths and old.name not in side.loaded_paths[0]
    assert cuda.counts == {"hits": 0, "compiles": 1}


def test_a_damaged_entry_is_compiled_again(side, tmp_path):
    cuda.get_kernel("rearrange.cu", COPY)
    path = Path(side.loaded_paths[0])
    path.write_bytes(path.read_bytes()[:-1])
    cuda.forget_kernels()
    src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    assert elf.problem(path.read_bytes(), "sm_90") is None
    assert cuda.counts == {"hits": 0, "compiles": 2}


def test_a_carried_cubin_of_another_nvrtc_13_is_reused_and_checked_at_load(side, tmp_path,
                                                                             monkeypatch):
    """The key of a cubin names NVRTC's major version only (a CUDA 13.0 driver loads a cubin
    of NVRTC 13.5); PTX's names the whole version. A carried cubin the driver refuses is
    compiled again here and replaces the carried one."""
    major, minor = nvrtc_version()
    assert cuda.cache_key("rearrange.cu", COPY, "sm_90", (major, minor + 3)) == \
        cuda.cache_key("rearrange.cu", COPY, "sm_90")
    assert cuda.cache_key("rearrange.cu", COPY, "sm_90", (major + 1, 0)) != \
        cuda.cache_key("rearrange.cu", COPY, "sm_90")
    assert cuda.cache_key("rearrange.cu", COPY, "compute_90", (major, minor + 3)) != \
        cuda.cache_key("rearrange.cu", COPY, "compute_90")
    cuda.get_kernel("rearrange.cu", COPY)
    carried = Path(side.loaded_paths[0])
    about = json.loads(carried.with_suffix(".json").read_text())
    assert about["nvrtc"] == f"{major}.{minor}"
    about["nvrtc"] = f"{major}.{minor + 3}"  # as if warmed elsewhere
    carried.with_suffix(".json").write_text(json.dumps(about))
    cuda.forget_kernels()
    _launch_copy(side)
    assert side.loaded_paths[-1] == str(carried) and cuda.counts["hits"] == 1

    def old_driver(self):  # refuses what a newer NVRTC made
        if self.about.get("nvrtc") != f"{major}.{minor}":
            raise cupy_standin.CUDADriverError(222, "cuModuleLoad: unsupported toolchain")

    monkeypatch.setattr(cupy_standin.RawModule, "_check_image", old_driver)
    cuda.forget_kernels()
    src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    assert side.loaded_paths[-1] == str(carried)  # replaced in place
    assert json.loads(carried.with_suffix(".json").read_text())["nvrtc"] == f"{major}.{minor}"
    assert cuda.counts == {"hits": 2, "compiles": 2}


def test_a_binary_of_this_nvrtc_the_driver_refuses_is_an_error_not_a_loop(side, monkeypatch):
    def refusing_driver(self):
        raise cupy_standin.CUDADriverError(209, "cuModuleLoad: no binary for this GPU")

    monkeypatch.setattr(cupy_standin.RawModule, "_check_image", refusing_driver)
    with pytest.raises(cupy_standin.CUDADriverError, match="209"):
        cuda.get_kernel("rearrange.cu", COPY)
    assert cuda.counts["compiles"] == 1


def test_each_process_adds_its_counts_to_the_named_file(tmp_path, monkeypatch):
    counts_file = tmp_path / "counts"
    monkeypatch.setattr(cuda, "counts", {"hits": 3, "compiles": 1})
    monkeypatch.delenv(cuda.COUNTS_VAR, raising=False)
    cuda.append_counts()  # not asked: nothing written
    assert not counts_file.exists()
    monkeypatch.setenv(cuda.COUNTS_VAR, str(counts_file))
    cuda.append_counts()
    cuda.append_counts()
    assert [json.loads(line) for line in counts_file.read_text().splitlines()] == \
        [{"hits": 3, "compiles": 1}] * 2
