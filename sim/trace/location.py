"""Where a table lives: a local path or a URL (`s3://`, `gs://`, `abfs://`, `hdfs://`), read through pyarrow's file
systems with the credentials the environment gives (for S3: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, the
configuration files, AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3 for another endpoint, AWS_REGION). A file that cannot
be read is one `TraceError` naming it."""
from __future__ import annotations

import gzip
import os
import posixpath
from dataclasses import dataclass
from urllib.parse import urlparse

from .history import TraceError

_S3 = ("s3", "s3a", "s3n")
_FROM_URI = ("gs", "gcs", "abfs", "abfss", "az", "hdfs", "viewfs")


def _s3():
    from pyarrow import fs
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    kwargs = {"region": region} if region else {}
    if endpoint:
        parsed = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
        kwargs.update(endpoint_override=parsed.netloc + parsed.path.rstrip("/"), scheme=parsed.scheme)
    return fs.S3FileSystem(**kwargs)


@dataclass(frozen=True)
class Location:
    """A folder or file of a table: its file system, its path in it, and how the user named it (`url`, for
    messages and for the paths below it)."""
    fs: object
    path: str
    url: str

    @classmethod
    def of(cls, url: str) -> "Location":
        from pyarrow import fs
        scheme = urlparse(url).scheme.lower() if "://" in url else ""
        try:
            if scheme in ("", "file"):
                local = urlparse(url).path if scheme else url
                return cls(fs.LocalFileSystem(), os.path.abspath(os.path.expanduser(local)), url)
            if scheme in _S3:
                parsed = urlparse(url)
                return cls(_s3(), (parsed.netloc + parsed.path).rstrip("/"), url)
            if scheme in _FROM_URI:
                filesystem, path = fs.FileSystem.from_uri(url)
                return cls(filesystem, path.rstrip("/"), url)
        except (OSError, ValueError, ImportError) as exc:   # pyarrow's errors are OSError and ValueError (ArrowInvalid)
            raise TraceError(f"{url}: cannot open its file system: {_first_line(exc)}") from None
        raise TraceError(f"{url}: unknown location scheme {scheme!r} (a local path, s3://, gs://, abfs:// or hdfs://)")

    def child(self, name: str) -> "Location":
        return Location(self.fs, posixpath.join(self.path, name), self.url.rstrip("/") + "/" + name)

    def parent(self) -> "Location":
        return Location(self.fs, posixpath.dirname(self.path.rstrip("/")), self.url.rstrip("/").rsplit("/", 1)[0])

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    def kind(self) -> str:
        """'file', 'dir' or 'missing'."""
        from pyarrow import fs
        try:
            info = self.fs.get_file_info(self.path)
        except OSError as exc:
            raise TraceError(f"{self.url}: cannot read it: {_first_line(exc)}") from None
        return {fs.FileType.File: "file", fs.FileType.Directory: "dir"}.get(info.type, "missing")

    def names(self) -> list[str]:
        """The names of the files in this folder (not recursive)."""
        from pyarrow import fs
        try:
            infos = self.fs.get_file_info(fs.FileSelector(self.path, recursive=False))
        except OSError as exc:
            raise TraceError(f"{self.url}: cannot list it: {_first_line(exc)}") from None
        return sorted(posixpath.basename(i.path) for i in infos if i.type == fs.FileType.File)

    def read_bytes(self) -> bytes:
        try:
            with self.fs.open_input_stream(self.path) as f:
                data = f.read()
        except FileNotFoundError:
            raise TraceError(f"{self.url}: no such file") from None
        except OSError as exc:
            raise TraceError(f"{self.url}: cannot read it: {_first_line(exc)}") from None
        if data[:2] == b"\x1f\x8b":                  # gzip (Iceberg's *.gz.metadata.json)
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise TraceError(f"{self.url}: gzip cut short or damaged ({exc})") from None
        return data

    def read_text(self) -> str:
        data = self.read_bytes()
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TraceError(f"{self.url}: not UTF-8 text (offset {exc.start})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
