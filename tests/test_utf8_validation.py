"""Strings that are not valid UTF-8 are refused as pylance refuses them: a damaged string page
fails the read with an error naming file, column and page, never garbled text."""

from __future__ import annotations

import glob

import lance
import pyarrow as pa
import pytest

N = 1000


def damaged(path, version, dictionary):
    """A dataset of one string page whose bytes (stored uncompressed) get one 0xFF."""
    vals = (
        [f"DICTVAL-{i % 5}-xyzxyzxyz" for i in range(N)]
        if dictionary
        else [f"MARKER-{i:06d}-abcdefghijklmnop" for i in range(N)]
    )
    schema = pa.schema(
        [
            pa.field("id", pa.int64()),
            pa.field("s", pa.string(), metadata={"lance-encoding:compression": "none"}),
        ]
    )
    lance.write_dataset(
        pa.table({"id": pa.array(range(N), pa.int64()), "s": vals}, schema=schema),
        path,
        data_storage_version=version,
    )
    (file,) = glob.glob(f"{path}/data/*.lance")
    b = bytearray(open(file, "rb").read())
    at = b.find(b"DICTVAL-3" if dictionary else b"MARKER-000500")
    assert at >= 0, "the string bytes are where the test can damage them"
    b[at + 2] = 0xFF
    open(file, "wb").write(bytes(b))
    return file


@pytest.mark.parametrize(
    "version,dictionary",
    [
        ("legacy", False),
        ("legacy", True),
        ("2.0", False),
        ("2.0", True),
        ("2.1", False),
        ("2.1", True),
        ("2.2", False),
    ],
)
def test_invalid_utf8_is_refused_as_pylance_refuses_it(spark, tmp_path, version, dictionary):
    path = str(tmp_path / "d.lance")
    file = damaged(path, version, dictionary)
    with pytest.raises(Exception, match="(?i)utf-?8"):
        lance.dataset(path).to_table()
    with pytest.raises(Exception) as e:
        spark.read.format("lance").load(path).collect()
    msg = str(e.value).split("\n\tat ")[0]
    assert "UTF-8" in msg and file.split("/")[-1] in msg and "'s'" in msg and "page" in msg, msg
    # Columns that do not read the damaged page still read, as in pylance.
    want = sorted(lance.dataset(path).to_table(columns=["id"])["id"].to_pylist())
    got = sorted(r["id"] for r in spark.read.format("lance").load(path).select("id").collect())
    assert got == want


@pytest.mark.parametrize("version", ["legacy", "2.0", "2.1", "2.2"])
def test_multibyte_strings_read_as_pylance(spark, tmp_path, version):
    vals = [
        None if i % 13 == 0 else ["é", "中文", "😀", "a\u0000b", "\uffff", ""][i % 6] * (i % 4)
        for i in range(3000)
    ]
    path = str(tmp_path / "m.lance")
    lance.write_dataset(
        pa.table(
            {
                "id": pa.array(range(3000), pa.int64()),
                "s": vals,
                "l": [[v, v] if v else [] for v in vals],
            }
        ),
        path,
        data_storage_version=version,
    )
    want = lance.dataset(path).to_table().to_pylist()
    got = [r.asDict() for r in spark.read.format("lance").load(path).orderBy("id").collect()]
    assert got == want
