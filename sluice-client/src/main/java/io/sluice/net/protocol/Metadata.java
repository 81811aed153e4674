package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;

import java.util.ArrayList;
import java.util.List;

/**
 * METADATA: topics with their configuration and per-partition offsets.
 * <pre>
 * request:  topics array of string (empty array: every topic)
 * response: topics array of
 *             name string | errorCode int16 | errorMessage string (null when 0) | description (when errorCode == 0)
 * description:
 *   partitionCount int32 | retentionMillis int64 | retentionBytes int64 | journaled int8
 *   | partitions array of  partition int32 | startOffset int64 | endOffset int64 | journalBytes int64
 * </pre>
 */
public final class Metadata {
    private Metadata() {
    }

    public record Request(List<String> topics) {
        public void encode(ByteBuf out) {
            out.writeInt(topics.size());
            for (String t : topics) {
                Wire.writeString(out, t);
            }
        }

        public static Request decode(ByteBuf in) {
            int count = Wire.readCount(in, 2, "topic");
            List<String> topics = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                topics.add(Wire.readRequiredString(in, "topic"));
            }
            Wire.expectEnd(in, "metadata request");
            return new Request(topics);
        }
    }

    /** One topic: its description, or why there is none. */
    public record TopicResult(String name, SluiceException.Code error, String errorMessage, TopicDescription description) {
        /**
         * The topic's description.
         *
         * @throws SluiceException the typed error the broker gave instead (unknown topic, not authenticated, ...)
         */
        public TopicDescription describedOrThrow() {
            if (error != SluiceException.Code.NONE) {
                throw SluiceException.fromCode(error, errorMessage);
            }
            return description;
        }
    }

    public record Response(List<TopicResult> topics) {
        public void encode(ByteBuf out) {
            out.writeInt(topics.size());
            for (TopicResult t : topics) {
                Wire.writeString(out, t.name());
                out.writeShort(t.error().id);
                if (t.error() != SluiceException.Code.NONE) {
                    Wire.writeString(out, t.errorMessage());
                } else {
                    Wire.writeString(out, null);
                    writeDescription(out, t.description());
                }
            }
        }

        public static Response decode(ByteBuf in) {
            int count = Wire.readCount(in, 6, "topic");
            List<TopicResult> topics = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String name = Wire.readRequiredString(in, "topic");
                SluiceException.Code error = SluiceException.Code.of(Wire.readShort(in));
                String message = Wire.readString(in);
                TopicDescription description = error == SluiceException.Code.NONE ? readDescription(in, name) : null;
                topics.add(new TopicResult(name, error, message, description));
            }
            return new Response(topics);
        }
    }

    public static void writeDescription(ByteBuf out, TopicDescription d) {
        TopicConfig c = d.config();
        out.writeInt(c.partitions());
        out.writeLong(c.retentionMillis());
        out.writeLong(c.retentionBytes());
        out.writeByte(c.journaled() ? 1 : 0);
        out.writeInt(d.partitions().size());
        for (TopicDescription.PartitionInfo p : d.partitions()) {
            out.writeInt(p.partition());
            out.writeLong(p.startOffset());
            out.writeLong(p.endOffset());
            out.writeLong(p.journalBytes());
        }
    }

    public static TopicDescription readDescription(ByteBuf in, String name) {
        int partitionCount = Wire.readInt(in);
        long retentionMillis = Wire.readLong(in);
        long retentionBytes = Wire.readLong(in);
        boolean journaled = Wire.readBoolean(in);
        TopicConfig config;
        try {
            config = new TopicConfig(name, partitionCount, retentionMillis, retentionBytes, journaled);
        } catch (SluiceException e) {
            throw new ProtocolException("invalid topic description: " + e.getMessage());
        }
        int count = Wire.readCount(in, 28, "partition");
        List<TopicDescription.PartitionInfo> partitions = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            partitions.add(new TopicDescription.PartitionInfo(Wire.readInt(in), Wire.readLong(in), Wire.readLong(in), Wire.readLong(in)));
        }
        return new TopicDescription(config, partitions);
    }
}
