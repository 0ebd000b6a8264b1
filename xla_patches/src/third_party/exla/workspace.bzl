"""The @exla repository: a local exla checkout, for //xla/service/exla.

exla is not downloaded: point EXLA_SOURCE_DIR at an exla checkout (the
directory that holds exla's WORKSPACE, BUILD and cc/), for example

    bazel build --repo_env=EXLA_SOURCE_DIR=/abs/path/to/exla //xla/...

or replace the repository outright with
--override_repository=exla=/abs/path/to/exla.
"""

def _exla_repository_impl(ctx):
    source = ctx.os.environ.get("EXLA_SOURCE_DIR", "")
    if not source:
        fail("@exla: set EXLA_SOURCE_DIR to an exla checkout, e.g. " +
             "--repo_env=EXLA_SOURCE_DIR=/abs/path/to/exla")
    root = ctx.path(source)
    if not root.get_child("cc").get_child("api").get_child("exla.h").exists:
        fail("@exla: %s is not an exla checkout (no cc/api/exla.h)" % source)

    # Link exla's own files in, except its workspace files (this repository
    # gets its own), git's data and Bazel's output links of a standalone exla
    # build.
    for child in root.readdir():
        name = child.basename
        if name in ("WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", ".git"):
            continue
        if name.startswith("bazel-"):
            continue
        ctx.symlink(child, name)
    ctx.file("WORKSPACE", "workspace(name = \"exla\")\n")

exla_repository = repository_rule(
    implementation = _exla_repository_impl,
    environ = ["EXLA_SOURCE_DIR"],
    local = True,
)
