package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * A response frame written as one small buffer of fields, with record bytes spliced in at positions of it: the parts
 * (buffers the records were copied into once, out of the journal) join the frame as they are, in a composite of slices
 * of the fields around them, so a large fetch is never one buffer. Netty's adaptive allocator pools buffers up to
 * {@link #POOLED_BYTES}; a larger one is a fresh mapping, zeroed or faulted in page by page on every response and freed
 * again (a profile of the binary port's consume showed the zeroing alone at a fifth of the broker's CPU).
 * <pre>
 * fields:  | length | header ... partition 0's header |  partition 1's header ... |
 *                                                     ^ splice(at, part) ...    ^ splice(at, part)
 * frame:   | fields slice | part | part | fields slice | part | fields slice |
 * </pre>
 * Owns the parts spliced in until {@link #assemble} hands them to the frame or {@link #release} frees them.
 */
public final class SplitFrame {
    /** The largest buffer Netty's adaptive allocator pools (its 1 MiB size class). */
    public static final int POOLED_BYTES = 1 << 20;

    private final ByteBufAllocator alloc;
    private final List<ByteBuf> parts = new ArrayList<>();
    /** where in the fields buffer each part goes, non-decreasing */
    private final List<Integer> positions = new ArrayList<>();
    private int partBytes;

    public SplitFrame(ByteBufAllocator alloc) {
        this.alloc = alloc;
    }

    public ByteBufAllocator alloc() {
        return alloc;
    }

    /** Takes ownership of {@code part}, which goes at {@code fieldsIndex} of the fields, after earlier parts there. */
    public void splice(int fieldsIndex, ByteBuf part) {
        if (!positions.isEmpty() && fieldsIndex < positions.get(positions.size() - 1)) {
            part.release();
            throw new IllegalArgumentException("part at " + fieldsIndex + " before the last one at " + positions.get(positions.size() - 1));
        }
        parts.add(part);
        positions.add(fieldsIndex);
        partBytes += part.readableBytes();
    }

    /** Bytes spliced in so far: the frame is the fields plus these. */
    public int splicedBytes() {
        return partBytes;
    }

    /** How many parts are spliced in: {@link #reset} drops those after it. */
    public int mark() {
        return parts.size();
    }

    /** Frees the parts spliced in after {@code mark}. */
    public void reset(int mark) {
        while (parts.size() > mark) {
            ByteBuf part = parts.remove(parts.size() - 1);
            positions.remove(positions.size() - 1);
            partBytes -= part.readableBytes();
            part.release();
        }
    }

    /**
     * The frame: {@code fields} (whose readable bytes start at index 0) with every part spliced in. Takes ownership of
     * {@code fields}; returns it unchanged when there are no parts.
     */
    public ByteBuf assemble(ByteBuf fields) {
        if (parts.isEmpty()) {
            return fields;
        }
        CompositeByteBuf frame = alloc.compositeBuffer(2 * parts.size() + 1);
        try {
            int from = 0;
            for (int i = 0; i < parts.size(); i++) {
                int to = positions.get(i);
                if (to > from) {
                    frame.addComponent(true, fields.retainedSlice(from, to - from));
                }
                frame.addComponent(true, parts.get(i));
                parts.set(i, null); // the frame's now
                from = to;
            }
            if (fields.writerIndex() > from) {
                frame.addComponent(true, fields.retainedSlice(from, fields.writerIndex() - from));
            }
            return frame;
        } catch (RuntimeException e) {
            frame.release();
            release();
            throw e;
        } finally {
            fields.release();
            parts.clear();
            positions.clear();
            partBytes = 0;
        }
    }

    /** Frees every part not handed to a frame. */
    public void release() {
        for (ByteBuf part : parts) {
            if (part != null) {
                part.release();
            }
        }
        parts.clear();
        positions.clear();
        partBytes = 0;
    }
}
