# The fix of ../torchrun for `python3 -m torch.distributed.run` and `-m torch.distributed.launch`,
# which start through runpy and so never run ../torchrun: python3-torch 1.13 under Python 3.11
# fails on Std.from_str("0") (see ../torchrun). Python imports this module at start when this
# folder is on PYTHONPATH (the site module's `sitecustomize`), before the launcher's parser runs.
try:
    from torch.distributed.elastic.multiprocessing import api
except ImportError:
    api = None

if api is not None:
    _from_str = api.Std.from_str

    def _from_str_fixed(cls, vm):
        std = _from_str(vm)
        if isinstance(std, dict):
            return {k: api.Std.NONE if v is None else v for k, v in std.items()}
        return api.Std.NONE if std is None else std

    api.Std.from_str = classmethod(_from_str_fixed)
