"""``python -m eks_gpu_platform.offline``: the render's command line, as a short-lived process.

The cyclic garbage collector is switched off first: a render allocates a few million objects
(the SDK's modules and types, the program's resources) and frees almost none of them before it
exits, so the collector's full passes over that heap are pure overhead (a third of the prod
render's time, measured with ``make bench``). Reference counting still frees every object that
is not in a cycle. The standard library documents ``gc.disable`` for code that creates no
reference cycles it needs reclaimed (https://docs.python.org/3.11/library/gc.html); a render of
500 node pools peaks under 400 MB with it off (``make bench``). ``render.cli`` then exits
without the interpreter's teardown.
"""

import gc

gc.disable()

from .render import cli  # noqa: E402  (after gc.disable: the imports allocate most objects)

cli()
