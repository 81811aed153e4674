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
        TIMEOUT(7), CORRUPT_RECORD(2), ILLEGAL_GENERATION(22), FENCED_MEMBER(82), NON_EMPTY_GROUP(68), GROUP_NOT_FOUND(69), OFFSET_REGRESSION(100);

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
            case CORRUPT_RECORD -> new CorruptRecordException(message, null, -1);
            case UNKNOWN_MEMBER -> new UnknownMemberException(message);
            case ILLEGAL_GENERATION -> new IllegalGenerationException(message);
            case FENCED_MEMBER -> new FencedMemberException(message);
            case REBALANCE_IN_PROGRESS -> new RebalanceInProgressException(message);
            case NON_EMPTY_GROUP -> new NonEmptyGroupException(message);
            case OFFSET_REGRESSION -> new OffsetRegressionException(message);
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
     * Stored bytes fail their check (a record batch's CRC32C, or its framing): the journal file was damaged after it
     * was written. Names the topic-partition and the offset whose batch is damaged; nothing of that batch is returned.
     */
    public static final class CorruptRecordException extends SluiceException {
        private static final long serialVersionUID = 1L;
        private final transient TopicPartition partition;
        private final long offset;

        public CorruptRecordException(String message, TopicPartition partition, long offset) {
            super(Code.CORRUPT_RECORD, message);
            this.partition = partition;
            this.offset = offset;
        }

        /** The damaged partition, or null when only the message crossed the wire. */
        public TopicPartition partition() {
            return partition;
        }

        /** The first offset the damaged batch claims (or the offset being read), -1 if unknown. */
        public long offset() {
            return offset;
        }
    }

    /**
     * A consumer-group call was refused: the caller's view of the group is out of date. Nothing was changed. What to
     * do is in each subclass; a consumer that catches this base class should drop its partitions and rejoin.
     */
    public abstract static class GroupException extends SluiceException {
        private static final long serialVersionUID = 1L;

        protected GroupException(Code code, String message) {
            super(code, message);
        }
    }

    /** The group does not know this member (its session expired, it left, or the id was never issued): join anew. */
    public static final class UnknownMemberException extends GroupException {
        private static final long serialVersionUID = 1L;

        public UnknownMemberException(String message) {
            super(Code.UNKNOWN_MEMBER, message);
        }
    }

    /**
     * The call carried a generation that is not the group's current one (Kafka's {@code ILLEGAL_GENERATION}), or a
     * partition the member does not own in it: a newer generation owns the partitions. Rejoin.
     */
    public static final class IllegalGenerationException extends GroupException {
        private static final long serialVersionUID = 1L;

        public IllegalGenerationException(String message) {
            super(Code.ILLEGAL_GENERATION, message);
        }
    }

    /**
     * A join presented a member id with a generation other than the one last given to that member: another
     * incarnation uses the id (Kafka's {@code FENCED_INSTANCE_ID}). Join with no member id.
     */
    public static final class FencedMemberException extends GroupException {
        private static final long serialVersionUID = 1L;

        public FencedMemberException(String message) {
            super(Code.FENCED_MEMBER, message);
        }
    }

    /** The group is rebalancing: stop consuming, then rejoin with the current member id and generation. */
    public static final class RebalanceInProgressException extends GroupException {
        private static final long serialVersionUID = 1L;

        public RebalanceInProgressException(String message) {
            super(Code.REBALANCE_IN_PROGRESS, message);
        }
    }

    /** An explicit offset reset while the group has live members (Kafka's {@code NON_EMPTY_GROUP}). */
    public static final class NonEmptyGroupException extends GroupException {
        private static final long serialVersionUID = 1L;

        public NonEmptyGroupException(String message) {
            super(Code.NON_EMPTY_GROUP, message);
        }
    }

    /**
     * A commit would move a committed offset backwards. Committed offsets only grow; moving one back is an explicit
     * {@link ConsumerGroups#resetOffsets} of an empty group.
     */
    public static final class OffsetRegressionException extends GroupException {
        private static final long serialVersionUID = 1L;

        public OffsetRegressionException(String message) {
            super(Code.OFFSET_REGRESSION, message);
        }
    }
}
