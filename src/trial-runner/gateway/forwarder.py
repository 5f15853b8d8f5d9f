"""The model gateway's forwarder inside a bubblewrap sandbox that has no network.

The sandbox has a loopback of its own and nothing else. This listens on 127.0.0.1:PORT there, the
same port as the gateway's on the host, so the trial's gateway URL is the same under every
sandbox, and relays each connection to the gateway's unix socket, bound into the sandbox: the
agent reaches its model and nothing else (no other port, no other address, not the provider).

Run as `python3 forwarder.py PORT SOCKET` before each command of such a trial. It returns once it
listens (the listener is handed to a child that serves), so the command after it finds the port
open; the sandbox's supervisor kills it with everything else when the command ends.
"""
import os
import socket
import sys
import threading

CHUNK = 65536


def relay(source, target):
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=relay, args=(upstream, client), daemon=True)
    back.start()
    relay(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, path), daemon=True).start()


main()
