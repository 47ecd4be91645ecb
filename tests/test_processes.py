"""shared/processes.py on real processes: a child that lives, dies, is a zombie, is reaped."""

from __future__ import annotations

import os
import signal
import subprocess

from shared import processes
from testkit.waiting import wait_for


def test_a_childs_life_as_the_process_facts_tell_it() -> None:
    before = processes.clock()
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert processes.alive(child.pid) and processes.exists(child.pid)
        started = processes.started_at(child.pid)
        assert started is not None and before - 0.02 <= started <= processes.clock()
        assert processes.group_of(child.pid) == child.pid
        assert processes.group_members(child.pid) == [child.pid]
        assert child.pid in processes.children(os.getpid())
        assert child.pid in processes.descendants(os.getpid())
        assert processes.cmdline(child.pid) == ["sleep", "30"]
        assert processes.exe_name(child.pid) == "sleep"
        assert processes.pss_bytes([child.pid]) > 0
        os.kill(child.pid, signal.SIGKILL)
        # dead but not reaped: a zombie is not alive, and its group has no member left
        wait_for(lambda: not processes.alive(child.pid), 5, "the child a zombie")
        assert processes.exists(child.pid)
        assert child.pid in processes.children(os.getpid(), zombies=True)
        assert child.pid not in processes.children(os.getpid())
        assert processes.group_members(child.pid) == []
    finally:
        child.kill()
        child.wait()
    assert not processes.exists(child.pid) and processes.started_at(child.pid) is None
    assert processes.cmdline(child.pid) == [] and processes.pss_bytes([child.pid]) == 0
