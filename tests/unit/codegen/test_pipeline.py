"""The pipeline package's generated module: committed as the specs generate it today, and importing
it imports no message module (a message's classes are bound when the pipeline first meets one)."""

from __future__ import annotations

import subprocess
import sys

from kafka_admin_kraft.codegen import pipeline


def test_generated_module_is_up_to_date() -> None:
    stale = [path.name for path, content in pipeline.outputs().items() if path.read_text() != content]
    assert stale == [], "run: python -m kafka_admin_kraft.codegen"


def test_importing_the_writers_imports_no_message_module() -> None:
    program = ("import sys\n"
               "from kafka_admin_kraft.pipeline import record_json_writers as writers\n"
               "def loaded():\n"
               "    prefix = 'kafka_admin_kraft.protocol.messages.'\n"
               "    return sorted(m for m in sys.modules if m.startswith(prefix))\n"
               "print(loaded())\n"
               "bound = writers.BINDERS['VotersRecord']()\n"
               "print(loaded())\n"
               "print(sorted(cls.__qualname__ for cls in bound))\n")
    before, after, bound = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                          check=True).stdout.splitlines()
    assert before == "[]"
    assert after == "['kafka_admin_kraft.protocol.messages.voters_record']"
    assert bound == ("['VotersRecord', 'VotersRecord.Endpoint', 'VotersRecord.KRaftVersionFeature', "
                     "'VotersRecord.Voter']")
