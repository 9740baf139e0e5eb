"""kombu's Redis transport with two fixes that let a Celery worker outlive a Redis outage.

config/settings.py makes this the transport for redis:// and rediss:// broker URLs
(CELERY_BROKER_TRANSPORT). Nothing else changes: publishing, consuming and reconnecting
are kombu's own.

What went wrong without it (kombu 5.7.0, celery 5.7.0, redis-py 8.1.0; reproduced by
tests/test_worker_outlives_broker_outage.py): when Redis stops while the worker has a
task running and a BRPOP waiting for the next one, the worker

1. closes its channel, and kombu's close first reads the reply of the BRPOP in flight.
   The connection is gone, so that read raises, and the close stops half way: the channel
   is not marked closed and its unacknowledged tasks are not handed back.
2. Celery then detaches the kombu connection from the transport (`transport.client =
   None`) and closes the channel a second time. This time the close goes on to hand the
   tasks back, which needs a new Redis client, whose address kombu reads from
   `transport.client`: AttributeError "'NoneType' object has no attribute 'hostname'".
   Celery only expects connection errors there, so the worker logged "Unrecoverable
   error" and exited.
3. When it did not exit there, the task that was running finished after the reconnect
   and its acknowledgement went to the old channel: the same AttributeError, and the
   worker exited then.

So a channel whose connection is gone now fails with a connection error, which kombu and
Celery already handle (the worker logs "Couldn't ack" and goes on), and closing such a
channel goes past the lost BRPOP reply and never raises.

A task whose acknowledgement or hand-back failed stays in Redis's unacknowledged set and
runs again after the visibility timeout (an hour by default). The recompute tasks are
safe to run twice, and what they would have done the minute sweep does meanwhile.
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
        # error it is (step 2 and 3 above), not as an AttributeError on None.
        if self.connection.client is None:
            raise RedisConnectionError("this channel's broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)

    def close(self) -> None:
        # kombu reads the reply of a BRPOP still in flight before anything else (step 1
        # above). Read it here, where losing the reply to a dead connection does not stop
        # the close: the message it may have carried is still in Redis.
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
