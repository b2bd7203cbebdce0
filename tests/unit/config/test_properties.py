"""kafka_admin_kraft.config.properties: Java's .properties rules, read the same by every caller (client
settings, server settings, meta.properties), and the two writers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_admin_kraft.client.config import load_properties as load_client_properties
from kafka_admin_kraft.config.properties import (
    format_config_file,
    format_properties,
    parse_properties,
    read_properties,
)
from kafka_admin_kraft.config.server import ConfigError as ServerConfigError
from kafka_admin_kraft.config.server import load_properties as load_server_properties
from kafka_admin_kraft.errors import ConfigError as ClientConfigError
from kafka_admin_kraft.storage import MetaProperties, StorageFormatError, read_meta_properties

MOMENT = datetime(2024, 3, 7, 10, 22, 17, tzinfo=timezone.utc)

# Each case: the bytes of a file and what java.util.Properties.load(InputStream) makes of them.
SYNTAX = {
    "separators": (b"a=1\nb:2\nc 3\nd = 4\ne : 5\nf\t6\ng\f7\n",
                   {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7"}),
    "only the first separator counts": (b"a==1\nb::2\nc = =3\nd 1 2\ne:=5\n",
                                        {"a": "=1", "b": ":2", "c": "=3", "d": "1 2", "e": "=5"}),
    "a key alone or with an empty value": (b"lonely\nempty=\nblank =   \n",
                                           {"lonely": "", "empty": "", "blank": ""}),
    "leading blanks skipped, trailing ones kept": (b"   a=  1  \n\t b = x y \n", {"a": "1  ", "b": "x y "}),
    "comments": (b"# one\n! two\n   # indented\n\t! indented\nkey=#not a comment !nor this\n",
                 {"key": "#not a comment !nor this"}),
    "a comment ending in a backslash does not continue": (b"# note \\\nkey=v\n", {"key": "v"}),
    "continuation lines": (b"key=a,\\\n    b,\\\n\t c\nnext=d\n", {"key": "a,b,c", "next": "d"}),
    "an even number of backslashes does not continue": (b"key=a\\\\\nnext=b\n", {"key": "a\\", "next": "b"}),
    "three backslashes do": (b"key=a\\\\\\\nb\n", {"key": "a\\b"}),
    "a continued line starting with # is not a comment": (b"key=a\\\n  #b\n", {"key": "a#b"}),
    "an empty line ends a continuation": (b"key=a\\\n\nnext=b\n", {"key": "a", "next": "b"}),
    "a backslash at the end of the file is dropped": (b"key=a\\", {"key": "a"}),
    "a continued key": (b"long\\\n  .key=v\n", {"long.key": "v"}),
    "CR LF and lone CR line ends": (b"a=1\r\nb=2\rc=3\r\n", {"a": "1", "b": "2", "c": "3"}),
    "escapes": (b"k\\ ey\\=x\\:y\\#=\\ lead\\ttab\\nnl\\rcr\\fff\\\\back\\qq\n",
                {"k ey=x:y#": " lead\ttab\nnl\rcr\fff\\backqq"}),
    "unicode escapes": (b"a=caf\\u00e9\nb=\\u0041\\u00DF\n\\u006b=key\nc=\\ud83d\\ude00\n",
                        {"a": "caf\u00e9", "b": "A\u00df", "k": "key", "c": "\U0001f600"}),
    "bytes are ISO-8859-1": (b"latin=caf\xe9\nutf8=caf\xc3\xa9\n",
                             {"latin": "caf\u00e9", "utf8": "caf\u00c3\u00a9"}),
    "a repeated key keeps its last value": (b"a=1\nb=2\na=3\n", {"a": "3", "b": "2"}),
}


def _file(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "some.properties"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(("content", "expected"), SYNTAX.values(), ids=SYNTAX.keys())
def test_every_reader_follows_java(tmp_path: Path, content: bytes, expected: dict[str, str]) -> None:
    path = _file(tmp_path, content)
    assert read_properties(path) == expected
    assert parse_properties(content.decode("iso-8859-1")) == expected
    assert load_client_properties(path) == expected
    assert load_server_properties(path) == expected


def test_meta_properties_are_read_by_the_same_rules(tmp_path: Path) -> None:
    path = _file(tmp_path, b"#\r\n! by hand\nversion : 1\ncluster.id=abc\\\n   def\n"
                           b"node.id 7\nnode.id=\\u0038\n")
    assert read_meta_properties(path) == MetaProperties(1, "abcdef", 8)


def test_a_malformed_unicode_escape_is_refused_by_every_reader_in_its_words(tmp_path: Path) -> None:
    path = _file(tmp_path, b"a=1\nb=\\u12G4\n")
    with pytest.raises(ValueError, match=r"^Malformed \\uxxxx encoding\.$"):
        read_properties(path)
    with pytest.raises(ValueError, match=r"^Malformed \\uxxxx encoding\.$"):
        parse_properties("b=\\u12")
    with pytest.raises(ClientConfigError) as client:
        load_client_properties(path)
    assert str(client.value) == f"cannot parse the properties file {path}: Malformed \\uxxxx encoding."
    with pytest.raises(ServerConfigError) as server:
        load_server_properties(path)
    assert str(server.value) == f"Unable to parse config file {path}: Malformed \\uxxxx encoding."
    with pytest.raises(StorageFormatError, match="Malformed"):
        read_meta_properties(path)


def test_a_missing_file_in_each_readers_words(tmp_path: Path) -> None:
    missing = tmp_path / "missing.properties"
    with pytest.raises(OSError):
        read_properties(missing)
    with pytest.raises(ClientConfigError) as client:
        load_client_properties(missing)
    assert str(client.value) == f"cannot read the properties file {missing}: No such file or directory"
    with pytest.raises(ServerConfigError) as server:
        load_server_properties(missing)
    assert str(server.value) == f"Unable to read config file {missing}: No such file or directory"


# ----------------------------------------------------------------------------- writers


def test_a_configuration_file_is_written_as_a_person_writes_one() -> None:
    props = {"process.roles": "controller", "listeners": "CONTROLLER://127.0.0.1:9093",
             "sasl.jaas.config": 'org.example.Module required username="a" password="b=c";',
             "log.dirs": "/tmp/a,/tmp/b"}
    assert format_config_file(props) == "".join(f"{key}={value}\n" for key, value in props.items())


def test_a_configuration_file_escapes_only_what_would_read_back_differently() -> None:
    props = {"a key=b:c": " lead", "#hash": "#kept !kept", "!bang": "tab\there", "path": "C:\\dir\\",
             "lines": "one\ntwo\r", "caf\u00e9": "\u20ac \U0001f600"}
    text = format_config_file(props)
    assert text == ("a\\ key\\=b\\:c=\\ lead\n"
                    "\\#hash=#kept !kept\n"
                    "\\!bang=tab\\there\n"
                    "path=C:\\\\dir\\\\\n"
                    "lines=one\\ntwo\\r\n"
                    "caf\\u00E9=\\u20AC \\uD83D\\uDE00\n")
    assert text.isascii()
    assert parse_properties(text) == props


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(st.dictionaries(_TEXT, _TEXT, max_size=6))
def test_both_writers_read_back_exactly(props: dict[str, str]) -> None:
    assert parse_properties(format_config_file(props)) == props
    assert parse_properties(format_properties(props)) == props


def test_meta_properties_keep_the_escapes_of_javas_store() -> None:
    """``Properties.store`` escapes more than a configuration file needs; ``meta.properties`` keeps that."""
    assert format_properties({"k": "a:b=c"}).splitlines()[2] == "k=a\\:b\\=c"
    assert format_config_file({"k": "a:b=c"}) == "k=a:b=c\n"


def test_date_line_uses_the_local_zone_name() -> None:
    zone = timezone(timedelta(hours=1), "CET")
    text = format_properties({}, moment=datetime(2025, 12, 31, 23, 5, 0, tzinfo=zone))
    assert text == "#\n#Wed Dec 31 23:05:00 CET 2025\n"


def test_properties_escapes_are_written_like_java() -> None:
    text = format_properties({"a key": " lead = a:b#c!d\\e\tf"}, moment=MOMENT)
    assert text.splitlines()[2] == "a\\ key=\\ lead \\= a\\:b\\#c\\!d\\\\e\\tf"
    assert parse_properties(text) == {"a key": " lead = a:b#c!d\\e\tf"}
