# Every NVTX call, in order, for the test to read.
calls = []


def range_push(msg):
    calls.append("push " + msg)
    return 0


def range_pop():
    calls.append("pop")
    return 0


def mark(msg):
    calls.append("mark " + msg)
