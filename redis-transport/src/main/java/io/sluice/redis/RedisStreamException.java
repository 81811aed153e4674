package io.sluice.redis;

import io.sluice.core.SluiceException;

/**
 * A Redis command of a {@link GroupReader} or a {@link DeadLetterStream} failed (Redis down or restarting, a reply
 * lost with the connection, a refused command): the cause is Lettuce's exception. Transient as a rule: retry.
 */
public class RedisStreamException extends SluiceException {
    public RedisStreamException(String message, Throwable cause) {
        super(Code.UNKNOWN, message, cause);
    }
}
