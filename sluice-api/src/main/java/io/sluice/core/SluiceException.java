package io.sluice.core;

/**
 * Base of Sluice's typed errors. Expected conditions each have their own subclass (nested here so the family
 * reads as one vocabulary) and a stable {@link #code()} that the wire protocol and HTTP API reuse.
 */
public class SluiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Stable error codes, shared with the wire protocol. */
    public enum Code {
        UNKNOWN(-1), NONE(0), UNKNOWN_TOPIC(3), RECORD_TOO_LARGE(10), BACK_PRESSURED(11), CLOSED(12),
        TOPIC_EXISTS(36), INVALID_CONFIG(40), OFFSET_OUT_OF_RANGE(1), JOURNAL_FAILURE(56), UNKNOWN_MEMBER(25),
        REBALANCE_IN_PROGRESS(27), INVALID_REQUEST(42), UNSUPPORTED_VERSION(35), AUTHENTICATION_FAILED(58),
        TIMEOUT(7), GROUP_NOT_EMPTY(68), GROUP_NOT_FOUND(69);

        public final short id;

        Code(int id) {
            this.id = (short) id;
        }

        public static Code of(short id) {
            for (Code c : values()) {
                if (c.id == id) {
                    return c;
                }
            }
            return UNKNOWN;
        }
    }

    private final Code code;

    public SluiceException(Code code, String message) {
        super(message);
        this.code = code;
    }

    public SluiceException(Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public Code code() {
        return code;
    }

    /** Rebuilds the typed exception for a code received over the wire. */
    public static SluiceException fromCode(Code code, String message) {
        return switch (code) {
            case UNKNOWN_TOPIC -> new UnknownTopicException(message);
            case RECORD_TOO_LARGE -> new RecordTooLargeException(message);
            case BACK_PRESSURED -> new BackPressureException(message);
            case CLOSED -> new ClosedException(message);
            case TOPIC_EXISTS -> new TopicExistsException(message);
            case INVALID_CONFIG -> new InvalidConfigException(message);
            case OFFSET_OUT_OF_RANGE -> new OffsetOutOfRangeException(message);
            case JOURNAL_FAILURE -> new JournalException(message, null);
            case GROUP_NOT_EMPTY -> new GroupNotEmptyException(message);
            default -> new SluiceException(code, message);
        };
    }

    public static final class UnknownTopicException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public UnknownTopicException(String message) {
            super(Code.UNKNOWN_TOPIC, message);
        }

        public static UnknownTopicException of(String topic) {
            return new UnknownTopicException("unknown topic '" + topic + "'");
        }
    }

    public static final class TopicExistsException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public TopicExistsException(String message) {
            super(Code.TOPIC_EXISTS, message);
        }
    }

    public static final class RecordTooLargeException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public RecordTooLargeException(String message) {
            super(Code.RECORD_TOO_LARGE, message);
        }
    }

    /** The ring or a buffer is full and the caller's wait bound ran out. Nothing was taken: retry later. */
    public static final class BackPressureException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public BackPressureException(String message) {
            super(Code.BACK_PRESSURED, message);
        }
    }

    /** The broker, producer or consumer is closed. */
    public static final class ClosedException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public ClosedException(String message) {
            super(Code.CLOSED, message);
        }
    }

    /** A configuration value is invalid; the message names the setting and the value. */
    public static final class InvalidConfigException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public InvalidConfigException(String message) {
            super(Code.INVALID_CONFIG, message);
        }

        public static InvalidConfigException of(String setting, Object value, String requirement) {
            return new InvalidConfigException(setting + " " + requirement + ", got " + value);
        }
    }

    public static final class OffsetOutOfRangeException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public OffsetOutOfRangeException(String message) {
            super(Code.OFFSET_OUT_OF_RANGE, message);
        }
    }

    /** The journal could not be written (for example the disk is full). Events not acknowledged are not stored. */
    public static final class JournalException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public JournalException(String message, Throwable cause) {
            super(Code.JOURNAL_FAILURE, message, cause);
        }
    }

    /**
     * An operation that needs a group without live members (an offset reset) found members: stop its consumers
     * first, or wait for their session timeout.
     */
    public static final class GroupNotEmptyException extends SluiceException {
        private static final long serialVersionUID = 1L;

        public GroupNotEmptyException(String message) {
            super(Code.GROUP_NOT_EMPTY, message);
        }
    }
}
