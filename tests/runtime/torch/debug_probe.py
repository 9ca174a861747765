# A worker of the debugpy test: reports whether debugpy was imported in this process and
# whether something listens on 127.0.0.1:<DEBUGPY_TEST_PORT>, as "<rank> <imported> <listening>"
# in OUT_DIR/debug-<RANK>.txt.
import os
import socket
import sys

rank = os.environ["RANK"]
port = int(os.environ["DEBUGPY_TEST_PORT"])
listening = socket.socket().connect_ex(("127.0.0.1", port)) == 0
with open(os.path.join(os.environ["OUT_DIR"], f"debug-{rank}.txt"), "w") as f:
    f.write(f"{rank} {'debugpy' in sys.modules} {listening}\n")
