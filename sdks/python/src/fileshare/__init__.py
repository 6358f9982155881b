"""The official Python SDK for the Fileshare REST API.

    import fileshare

    with fileshare.Client(base_url="https://files.example.com/api/v1", api_key="fsk_...") as client:
        file = client.files.upload("video.mp4")
        print(file.public_link)

``fileshare.AsyncClient`` offers the same calls as coroutines.
"""

from ._async._audit_events import AsyncAuditEvents
from ._async._client import AsyncClient
from ._async._files import AsyncFiles
from ._async._links import AsyncLinks
from ._async._upload_requests import AsyncUploadRequests
from ._async._webhook_endpoints import AsyncWebhookEndpoints
from ._common import FileSort, FileState, ProgressCallback, Since, SortOrder, Timeout, TusCapabilities
from ._errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    FileshareError,
    InsufficientScopeError,
    IntegrityError,
    IpNotAllowedError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RateLimitInfo,
    ScanPendingError,
    ServerError,
    WebhookVerificationError,
)
from ._records import (
    ArchiveResult,
    BulkDeleteResult,
    AuditActor,
    AuditEvent,
    AuditEventList,
    AuditPagination,
    AuditTarget,
    CurrentKey,
    DownloadResult,
    FileList,
    FileRecord,
    FileScan,
    FileSource,
    Limits,
    Link,
    Pagination,
    Stats,
    StatsResult,
    UploadRequest,
    UploadRequestFileList,
    UploadRequestFilePagination,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryList,
    WebhookDeliveryPagination,
)
from ._response import RawResponse
from ._source import UploadInput
from ._sync._audit_events import AuditEvents
from ._sync._client import Client
from ._sync._download import Destination, FileOrLink
from ._sync._files import Files
from ._sync._links import Links
from ._sync._upload_requests import UploadRequests
from ._sync._webhook_endpoints import WebhookEndpoints
from ._version import __version__
from ._webhooks import Webhooks

__all__ = [
    "Client",
    "AsyncClient",
    "Files",
    "AsyncFiles",
    "Links",
    "AsyncLinks",
    "AuditEvents",
    "AsyncAuditEvents",
    "WebhookEndpoints",
    "AsyncWebhookEndpoints",
    "UploadRequests",
    "AsyncUploadRequests",
    "FileRecord",
    "FileSource",
    "FileScan",
    "Link",
    "FileList",
    "Pagination",
    "Stats",
    "Limits",
    "StatsResult",
    "ArchiveResult",
    "BulkDeleteResult",
    "DownloadResult",
    "CurrentKey",
    "AuditEvent",
    "AuditActor",
    "AuditTarget",
    "AuditEventList",
    "AuditPagination",
    "Webhook",
    "WebhookDelivery",
    "WebhookDeliveryList",
    "WebhookDeliveryPagination",
    "UploadRequest",
    "UploadRequestFileList",
    "UploadRequestFilePagination",
    "RawResponse",
    "TusCapabilities",
    "ProgressCallback",
    "Timeout",
    "Since",
    "FileSort",
    "FileState",
    "SortOrder",
    "UploadInput",
    "FileOrLink",
    "Destination",
    "FileshareError",
    "AuthenticationError",
    "PermissionDeniedError",
    "InsufficientScopeError",
    "IpNotAllowedError",
    "LimitExceededError",
    "NotFoundError",
    "BadRequestError",
    "ScanPendingError",
    "RateLimitError",
    "RateLimitInfo",
    "ServerError",
    "APIConnectionError",
    "APITimeoutError",
    "IntegrityError",
    "ConfigurationError",
    "WebhookVerificationError",
    "Webhooks",
    "__version__",
]
