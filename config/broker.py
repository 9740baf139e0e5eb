"""kombu's Redis transport with two fixes that let a Celery worker outlive a Redis outage.

config/settings.py makes this the transport for redis:// and rediss:// broker URLs
(CELERY_BROKER_TRANSPORT); publishing, consuming and reconnecting are kombu's own. A
channel whose connection is gone fails with a connection error, which kombu and Celery
handle, and closing such a channel goes past the lost BRPOP reply and never raises.
What went wrong without it: docs/operations.md, "Why the worker survives".
"""

import logging
from queue import Empty
from typing import TYPE_CHECKING, Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

logger = logging.getLogger(__name__)

if TYPE_CHECKING:

    class _KombuRedisChannel(kombu_redis.Channel):
        """kombu's Redis channel with the members used below that its type stubs
        (celery-types) leave out; at run time it is kombu's class itself."""

        _in_poll: Any  # False, None, or the connection a BRPOP was sent on
        connection_errors: tuple[type[BaseException], ...]

        def _brpop_read(self, **options: Any) -> Any: ...
        def _connparams(self, asynchronous: bool = False) -> dict[str, Any]: ...

else:
    _KombuRedisChannel = kombu_redis.Channel


class RedisChannel(_KombuRedisChannel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        # The transport's kombu connection is detached when that connection is closed.
        # A new client can no longer be made for this channel: say so as the connection
        # error it is, not as an AttributeError on None.
        if self.connection.client is None:
            raise RedisConnectionError("this channel's broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)

    def close(self) -> None:
        # kombu reads the reply of a BRPOP still in flight before anything else. Read it
        # here, where losing the reply to a dead connection does not stop the close: the
        # message it may have carried is still in Redis.
        if self._in_poll:
            try:
                self._brpop_read()
            except Empty:
                pass
            except self.connection_errors:
                logger.debug("the BRPOP in flight was lost with the broker connection")
        try:
            super().close()
        except self.connection_errors as error:
            # Handing unacknowledged tasks back (or deleting a temporary queue) needs the
            # broker; with it down they wait in Redis for the visibility timeout instead.
            logger.warning("closed a channel of an unreachable broker: %s", error)


class RedisTransport(kombu_redis.Transport):
    Channel = RedisChannel
