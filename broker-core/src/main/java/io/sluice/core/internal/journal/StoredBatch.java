package io.sluice.core.internal.journal;

import io.sluice.records.RecordBatch;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.UnsafeMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * The record batch a Chronicle document holds, read with record-batch's codec, which works on {@link ByteBuffer}s. A
 * mapped document is not one, so it is either viewed in place ({@link #view}: a read-only direct buffer pointed at the
 * document's bytes in the mapped cycle file, nothing copied) or copied out: the 61-byte header alone
 * ({@link #header}: offsets, count, framing), or the whole batch when it cannot be viewed (a document across two
 * mapped chunks, or a JVM that refuses the view). Buffers are owned and reused; nothing is allocated per read.
 * Single-threaded.
 *
 * <p><b>The view's lifetime.</b> It is valid only while the document's {@code DocumentContext} is open: Chronicle may
 * unmap the chunk after that. {@link #release} empties it (capacity 0), so a use after the document is closed fails
 * with {@link IndexOutOfBoundsException} instead of reading unmapped memory; callers release in a {@code finally}
 * before closing the document.
 */
final class StoredBatch {
    private static final Logger LOG = LoggerFactory.getLogger(StoredBatch.class);
    /**
     * Offsets of {@code Buffer.address} and {@code Buffer.capacity}, -1 when the JVM does not give them: then every
     * read copies (the behaviour before views). The same technique as Agrona's and Chronicle's own buffer wrappers;
     * {@code sun.misc.Unsafe.objectFieldOffset} needs no {@code --add-opens}.
     */
    private static final long ADDRESS;
    private static final long CAPACITY;

    static {
        long address = -1;
        long capacity = -1;
        try {
            address = UnsafeMemory.UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            capacity = UnsafeMemory.UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("capacity"));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.warn("journal reads copy each batch out of the mapped file: no direct view of it on this JVM ({})", e.toString());
            address = -1;
            capacity = -1;
        }
        ADDRESS = address;
        CAPACITY = capacity;
    }

    private final ByteBuffer header = ByteBuffer.allocate(RecordBatch.HEADER_SIZE);
    private final RecordBatch flyweight = new RecordBatch();
    private ByteBuffer whole = ByteBuffer.allocate(0);
    /** Read-only direct buffer re-pointed at each document viewed; capacity 0 when released. Big-endian. */
    private final ByteBuffer view = ADDRESS < 0 ? null : ByteBuffer.allocateDirect(0).slice().asReadOnlyBuffer();

    /**
     * The header of the batch that fills {@code in}'s readable bytes (one batch per document); check it with
     * {@code framingProblem(in.readRemaining())} before trusting its fields.
     */
    RecordBatch header(Bytes<?> in) {
        int n = (int) Math.min(RecordBatch.HEADER_SIZE, in.readRemaining());
        in.read(in.readPosition(), header.array(), 0, n);
        return flyweight.wrap(header, 0, n);
    }

    /** What is wrong with the framing of the batch in {@code in}'s readable bytes, or null. */
    String framingProblem(Bytes<?> in) {
        return header(in).framingProblem(in.readRemaining());
    }

    /**
     * {@code in}'s readable bytes at index 0 of the returned buffer, limit their length: a read-only view of the
     * mapped document when it lies in one mapping, else a copy. Valid until {@link #release} or the next call, and
     * never after the document is closed.
     */
    ByteBuffer view(Bytes<?> in) {
        long from = in.readPosition();
        int length = (int) in.readRemaining();
        if (view != null && length > 0 && in.isDirectMemory()) {
            in.addressForRead(from, length); // maps the chunk holding the document if it is not the current one
            BytesStore<?, ?> store = in.bytesStore();
            if (store != null && store.isDirectMemory() && store.inside(from, length)) {
                point(store.addressForRead(from), length);
                return view;
            }
        }
        return copy(in, from, length);
    }

    /** Empties the view: after this, a read through it fails instead of touching memory that may be unmapped. */
    void release() {
        if (view != null) {
            point(0, 0);
        }
    }

    private void point(long address, int capacity) {
        UnsafeMemory.UNSAFE.putLong(view, ADDRESS, address);
        UnsafeMemory.UNSAFE.putInt(view, CAPACITY, capacity);
        view.clear(); // position 0, limit = capacity
    }

    private ByteBuffer copy(Bytes<?> in, long from, int length) {
        if (whole.capacity() < length) {
            whole = ByteBuffer.allocate(Math.max(length, Math.min(Integer.MAX_VALUE - 8, whole.capacity() * 2)));
        }
        in.read(from, whole.array(), 0, length);
        return whole.clear().limit(length);
    }
}
