"""Every bad configuration of the table in test_config, through the render's command line:
exit 2, the same lines on stderr, no traceback, and nothing written."""

import pytest
import yaml
from test_config import BAD

from eks_gpu_platform.offline.render import main


def stack_file(path, values, region):
    config = {f"eks-gpu-platform:{key}": value for key, value in values.items()}
    if region is not None:
        config["aws:region"] = region
    path.write_text(yaml.safe_dump({"config": config}))
    return path


@pytest.mark.parametrize(("values", "region", "lines"), BAD)
def test_render_rejects_bad_configuration(values, region, lines, tmp_path, capsys):
    out = tmp_path / "out"
    path = stack_file(tmp_path / "Pulumi.bad.yaml", values, region)
    assert main(["--config-file", str(path), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == ["invalid stack configuration:", *(f"  {x}" for x in lines)]
    assert "Traceback" not in captured.err
    assert captured.out == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]


def test_the_table_is_large_enough():
    assert len(BAD) >= 40
