"""Checkpoint files: safetensors, JSON, bincode and manifests."""



def save_safetensors(path: object, tensors: object, metadata: object | None = None, *, manifest: bool = False, module_type: str | None = None) -> object:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as safetensors atomically; with manifest=True also writes <path>.manifest.json and returns its path.
    """

def load_safetensors(path: object, *, copy: bool = True) -> tuple:
    """
    Reads a .safetensors file, a directory, or a sharded model.safetensors.index.json; returns
    (dict of name -> Tensor, metadata dict). By default (copy=True) the tensors own their memory.
    With copy=False they alias a private copy-on-write memory map of the file: cheap to load, and
    writes never reach the file, but the file must stay unchanged while the tensors live -- truncating
    it makes reads fault (SIGBUS, killing the process) and rewriting it in place changes the tensors.
    """

def save_json(path: object, tensors: object, metadata: object | None = None, *, manifest: bool = True, module_type: str | None = None) -> object:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as json atomically; with manifest=True also writes <path>.manifest.json and returns its path.
    """

def load_json(path: object) -> tuple:
    """
    Reads a json state dict; returns (dict of name -> Tensor, metadata dict).
    """

def save_bincode(path: object, tensors: object, metadata: object | None = None, *, manifest: bool = True, module_type: str | None = None) -> object:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as bincode atomically; with manifest=True also writes <path>.manifest.json and returns its path.
    """

def load_bincode(path: object) -> tuple:
    """
    Reads a bincode state dict; returns (dict of name -> Tensor, metadata dict).
    """

def safetensors_header(path: object) -> tuple:
    """
    Validates a safetensors file's header without reading tensor data; returns (entries, metadata).
    """

def save_safetensors_bytes(tensors: object, metadata: object | None = None) -> bytes: ...

def load_safetensors_bytes(data: object) -> tuple: ...

def load_json_bytes(data: object) -> tuple: ...

def load_bincode_bytes(data: object) -> tuple: ...

def temporary_host_tag() -> str:
    """
    The tag (16 hex digits) naming this host and PID namespace in the names of atomic saves' temporaries
    (`.<file>.tmp-<tag>-<pid>-<n>`): only temporaries of this tag whose process is gone, or any a day old,
    are removed by later saves.
    """

def encode_structure(obj: object) -> tuple:
    """
    st.save's encoding of obj (tensors, NumPy arrays and scalars, and dicts, lists, tuples, str, int, float, bool
    and None made of them): returns (structure JSON, {key: Tensor}). TypeError/DtypeError for anything else.
    """

def decode_structure(text: str, tensors: dict) -> object:
    """
    Rebuilds what encode_structure described from its JSON and the file's tensors. Data only: any malformed
    description raises CheckpointError.
    """

def write_manifest(weights_path: object, format: str, tensors: object, module_type: str | None = None, metadata: object | None = None) -> str:
    """Writes <weights_path>.manifest.json; returns its path."""

def read_manifest(path: object, verify: bool = True) -> dict:
    """
    Parses <weights>.manifest.json; verify=True also checks the weights' size and sha256.
    """

def manifest_path(weights_path: object) -> str: ...

def sha256_file(path: object) -> str: ...

MAX_SAFETENSORS_HEADER: int = 100000000
