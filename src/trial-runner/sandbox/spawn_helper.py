"""The spawn helper in Python: it starts trial commands for the server and relays their output,
as spawn-helper.js does, over the framed protocol of spawn-frames.ts on its stdin (requests) and
stdout (events). Run as `python3 -I -S spawn_helper.py` by helper-transports.ts.

It exists for what a start costs. Node's spawn forks the whole helper process (its page tables
copied, its pages faulted in again before the exec); Python's subprocess starts a command with
vfork, sharing the helper's memory until the exec. A trivial command then costs less than half
the CPU of all processes (decision record 0050). The server uses it when python3 (3.5 or later)
is on its PATH, else the Node helper: both relay the same events.

fd 3 stays open on /dev/null in the helper, so that a command's status pipe (bubblewrap's
--json-status-fd 3) can be put there while the command starts and nothing else takes it.
Requests and events are handled in one thread: a command is started, written to, read from and
reaped (SIGCHLD wakes the loop) between two waits, never at once with another.
"""
import errno, json, os, selectors, signal, struct, subprocess

READ_BYTES = 65536
STATUS_FD = 3
NULL_FD = os.open(os.devnull, os.O_RDWR)
if NULL_FD == STATUS_FD:
    NULL_FD = os.dup(STATUS_FD)
else:
    os.dup2(NULL_FD, STATUS_FD, inheritable=False)

selector = selectors.DefaultSelector()
children = {}
by_pid = {}


def send(header, payload=b""):
    encoded = json.dumps(header, separators=(",", ":")).encode()
    view = memoryview(struct.pack(">II", 4 + len(encoded) + len(payload), len(encoded)) + encoded + payload)
    try:
        while view:
            view = view[os.write(1, view):]
    except OSError:
        stop()


def stop():
    # The server went away: nothing it started may outlive it.
    for pid in by_pid:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)


def close_each(*fds):
    for fd in fds:
        if fd is not None:
            os.close(fd)


class Child:
    def __init__(self, cid, process, readers, stdin_fd):
        self.id = cid
        self.process = process
        self.readers = readers
        self.stdin_fd = stdin_fd
        self.pending = bytearray()
        self.ending = False
        self.exited = False

    def write(self, data):
        if self.stdin_fd is not None:
            self.pending += data
            self.flush()

    def end(self):
        self.ending = True
        self.flush()

    def flush(self):
        if self.stdin_fd is None:
            return
        try:
            while self.pending:
                del self.pending[: os.write(self.stdin_fd, self.pending)]
        except BlockingIOError:
            self.watch_stdin(True)
            return
        except OSError:
            # The command closed its stdin (it never reads it): not an error.
            self.pending.clear()
            self.ending = True
        self.watch_stdin(False)
        if self.ending:
            self.close_stdin()

    def watch_stdin(self, wanted):
        registered = self.stdin_fd in selector.get_map()
        if wanted and not registered:
            selector.register(self.stdin_fd, selectors.EVENT_WRITE, ("stdin", self))
        elif registered and not wanted:
            selector.unregister(self.stdin_fd)

    def close_stdin(self):
        if self.stdin_fd is not None:
            self.watch_stdin(False)
            close_each(self.stdin_fd)
            self.stdin_fd = None

    def read(self, fd):
        try:
            chunk = os.read(fd, READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            send({"id": self.id, "ev": "data", "fd": self.readers[fd]}, chunk)
        else:
            self.close_reader(fd)

    def close_reader(self, fd):
        if self.readers.pop(fd, None) is not None:
            selector.unregister(fd)
            os.close(fd)
            self.closed_if_done()

    def destroy_pipes(self):
        for fd in list(self.readers):
            self.close_reader(fd)
        self.close_stdin()

    def closed_if_done(self):
        if self.exited and not self.readers and self.id in children:
            self.close_stdin()
            del children[self.id]
            send({"id": self.id, "ev": "close"})


def start(header, payload):
    cid = header["id"]
    keep_open = header.get("keepStdinOpen", False)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if header["stdin"] or keep_open else (None, None)
    status_r, status_w = os.pipe() if header["fd3"] else (None, None)
    try:
        if status_w is not None:
            os.dup2(status_w, STATUS_FD, inheritable=True)
        process = subprocess.Popen(
            [header["file"]] + header["args"],
            executable=header["file"],
            cwd=header["cwd"],
            env=header["env"],
            stdin=NULL_FD if in_r is None else in_r,
            stdout=out_w,
            stderr=err_w,
            pass_fds=() if status_w is None else (STATUS_FD,),
            start_new_session=True,
        )
    except (OSError, ValueError) as error:
        close_each(out_r, err_r, in_w, status_r)
        number = getattr(error, "errno", None)
        code = errno.errorcode.get(number, "EINVAL") if number else "EINVAL"
        send({"id": cid, "ev": "error", "code": code, "message": "spawn %s %s" % (header["file"], code)})
        return
    finally:
        if status_w is not None:
            os.dup2(NULL_FD, STATUS_FD, inheritable=False)
        close_each(out_w, err_w, in_r, status_w)
    readers = {out_r: 1, err_r: 2}
    if status_r is not None:
        readers[status_r] = 3
    child = Child(cid, process, readers, in_w)
    children[cid] = child
    by_pid[process.pid] = child
    for fd in readers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ, ("output", child))
    if in_w is not None:
        os.set_blocking(in_w, False)
    send({"id": cid, "ev": "spawned", "pid": process.pid})
    if payload:
        child.write(payload)
    if not keep_open:
        child.end()


def exit_event(cid, status):
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "SIG%d" % number
        return {"id": cid, "ev": "exit", "code": None, "signal": name}
    return {"id": cid, "ev": "exit", "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, "signal": None}


def reap():
    for pid, child in list(by_pid.items()):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done == 0:
            continue
        del by_pid[pid]
        # Reaped here: the Popen object must not wait for it again.
        child.process.returncode = status
        child.exited = True
        send(exit_event(child.id, status))
        child.closed_if_done()


def handle(header, payload):
    op = header["op"]
    if op == "spawn":
        start(header, payload)
        return
    child = children.get(header["id"])
    if child is None:
        return
    if op == "write":
        child.write(payload)
    elif op == "end":
        child.end()
    elif op == "destroy":
        child.destroy_pipes()


def take_requests(buffer):
    while len(buffer) >= 8:
        (length,) = struct.unpack_from(">I", buffer, 0)
        if len(buffer) < 4 + length:
            return
        (header_length,) = struct.unpack_from(">I", buffer, 4)
        header = json.loads(bytes(buffer[8 : 8 + header_length]))
        payload = bytes(buffer[8 + header_length : 4 + length])
        del buffer[: 4 + length]
        handle(header, payload)


def main():
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    selector.register(wake_r, selectors.EVENT_READ, ("reap", None))
    os.set_blocking(0, False)
    selector.register(0, selectors.EVENT_READ, ("requests", None))
    requests = bytearray()
    while True:
        for key, _ in selector.select():
            kind, child = key.data
            if kind == "output":
                if key.fd in child.readers:
                    child.read(key.fd)
            elif kind == "stdin":
                child.flush()
            elif kind == "reap":
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
                reap()
            else:
                try:
                    chunk = os.read(0, READ_BYTES)
                except BlockingIOError:
                    continue
                if not chunk:
                    stop()
                requests += chunk
                take_requests(requests)


main()
