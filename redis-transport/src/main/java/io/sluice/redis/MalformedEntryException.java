package io.sluice.redis;

import io.sluice.core.SluiceException;

/**
 * A stream entry's packed field does not parse (see {@link StreamWriter} for the format): a length varint runs past
 * the field's end or is longer than 5 bytes, or a length runs past the field's end. Written by a buggy or foreign
 * writer, or damaged; reading it again gives the same error, so retrying cannot help: the entry must be set aside
 * (dead-lettered with {@link #field()}) and acknowledged, or it blocks its group.
 *
 * <p>{@link GroupReader} does not throw this: it hands the entry out as a {@link StreamEntry} with
 * {@link StreamEntry#malformed()} set, and leaves what to do with it to its user.
 */
public final class MalformedEntryException extends SluiceException {
    private static final long serialVersionUID = 1L;
    private final String entryId;
    private final int offset;
    private final transient byte[] field;

    /**
     * @param offset the byte offset in the field where the bad varint or event starts
     * @param field  the field's whole value, as read (not copied)
     */
    public MalformedEntryException(String entryId, String fieldName, int offset, String problem, byte[] field) {
        super(Code.CORRUPT_RECORD, "stream entry " + entryId + ": field " + fieldName + " (" + field.length
                + " bytes) is malformed at byte offset " + offset + ": " + problem);
        this.entryId = entryId;
        this.offset = offset;
        this.field = field;
    }

    /** The entry's id ({@code <ms>-<seq>}), or the placeholder its reader gave when it has none. */
    public String entryId() {
        return entryId;
    }

    /** Where in the field the bad varint or event starts. */
    public int offset() {
        return offset;
    }

    /** The malformed field's raw bytes, for a dead letter (null after Java serialization). */
    public byte[] field() {
        return field;
    }
}
