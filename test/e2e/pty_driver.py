"""Runs a program on a pseudo-terminal and follows a script (node has no pty).

    python3 pty_driver.py STEPS_JSON PROGRAM [ARGUMENT ...]

The program gets the pty as stdin, stdout and controlling terminal; its stderr
is this process's. The driver keeps the pty's slave side open, so the
terminal's mode can be read while the program runs and after it has exited.
STEPS_JSON is a list of steps, run in order:
    {"write": TEXT}          types TEXT (UTF-8) on the terminal
    {"wait": TEXT}           waits until TEXT is shown after what the last wait
                             found (WAIT_SECONDS at most; then the script stops)
    {"mode": LABEL}          records the terminal's mode as modes[LABEL]
    {"signal": NAME}         sends the signal (e.g. "SIGTERM") to the program
    {"touch": PATH}          creates the file PATH (a signal to another process,
                             e.g. a mock holding an answer until it exists)
Then it waits for the program to exit (killing it after WAIT_SECONDS) and
prints one JSON object: output (all the program showed), code (exit code, or
null), signal (its name, or null), modes (LABEL -> {icanon, echo, isig, opost},
plus "before" and "after" the run), restored (the mode after the run is the
mode before, exactly) and failure (why the script stopped early, or null).
"""
import fcntl
import json
import os
import select
import signal
import sys
import termios
import time

# Each wait is for an event, so its bound is generous: a loaded machine running
# the ASan host is slow, never wrong (XSCLAW_PTY_WAIT_S overrides it).
WAIT_SECONDS = float(os.environ.get("XSCLAW_PTY_WAIT_S", "60"))
READ_BYTES = 4096


def mode_of(fd):
    _, oflag, _, lflag, *_ = termios.tcgetattr(fd)
    return {
        "icanon": bool(lflag & termios.ICANON),
        "echo": bool(lflag & termios.ECHO),
        "isig": bool(lflag & termios.ISIG),
        "opost": bool(oflag & termios.OPOST),
    }


def start(argv):
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            os.dup2(slave, 0)
            os.dup2(slave, 1)
            os.close(master)
            os.close(slave)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return pid, master, slave


def main():
    steps = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    pid, master, slave = start(argv)
    before = termios.tcgetattr(slave)
    modes = {"before": mode_of(slave)}
    output = bytearray()
    cursor = 0
    failure = None

    def read_some(seconds):
        """Reads what arrives within seconds; False when nothing did."""
        if not select.select([master], [], [], seconds)[0]:
            return False
        try:
            chunk = os.read(master, READ_BYTES)
        except OSError:
            return False
        output.extend(chunk)
        return bool(chunk)

    for step in steps:
        if "write" in step:
            os.write(master, step["write"].encode())
        elif "wait" in step:
            text = step["wait"].encode()
            deadline = time.time() + WAIT_SECONDS
            while output.find(text, cursor) < 0 and time.time() < deadline:
                read_some(0.05)
            found = output.find(text, cursor)
            if found < 0:
                failure = "never shown: %r" % step["wait"]
                break
            cursor = found + len(text)
        elif "mode" in step:
            modes[step["mode"]] = mode_of(slave)
        elif "signal" in step:
            os.kill(pid, getattr(signal, step["signal"]))
        elif "touch" in step:
            open(step["touch"], "a").close()
        else:
            failure = "unknown step: %r" % step
            break

    status = None
    deadline = time.time() + WAIT_SECONDS
    while status is None:
        read_some(0.05)
        done, waited = os.waitpid(pid, os.WNOHANG)
        if done:
            status = waited
        elif time.time() > deadline:
            failure = failure or "the program did not exit"
            os.kill(pid, signal.SIGKILL)
            status = os.waitpid(pid, 0)[1]
    while read_some(0.05):   # what it wrote last
        pass
    modes["after"] = mode_of(slave)
    json.dump({
        "output": output.decode(errors="replace"),
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else None,
        "modes": modes,
        "restored": termios.tcgetattr(slave) == before,
        "failure": failure,
    }, sys.stdout)


main()
