package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;

/**
 * CREATE_TOPIC.
 * <pre>
 * request:  name string | partitions int32 | retentionMillis int64 | retentionBytes int64 | journaled int8 | ifAbsent int8
 * response: description (the {@link Metadata} layout)
 * </pre>
 * Without {@code ifAbsent} an existing topic answers {@code TOPIC_EXISTS}; an invalid setting answers
 * {@code INVALID_CONFIG} naming the setting and the value.
 */
public final class CreateTopic {
    private CreateTopic() {
    }

    public record Request(TopicConfig config, boolean ifAbsent) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, config.name());
            out.writeInt(config.partitions());
            out.writeLong(config.retentionMillis());
            out.writeLong(config.retentionBytes());
            out.writeByte(config.journaled() ? 1 : 0);
            out.writeByte(ifAbsent ? 1 : 0);
        }

        /** @throws SluiceException.InvalidConfigException for a well-formed request with invalid settings */
        public static Request decode(ByteBuf in) {
            String name = Wire.readString(in);
            int partitions = Wire.readInt(in);
            long retentionMillis = Wire.readLong(in);
            long retentionBytes = Wire.readLong(in);
            boolean journaled = Wire.readBoolean(in);
            boolean ifAbsent = Wire.readBoolean(in);
            Wire.expectEnd(in, "create topic request");
            return new Request(new TopicConfig(name, partitions, retentionMillis, retentionBytes, journaled), ifAbsent);
        }
    }

    public record Response(TopicDescription description) {
        public void encode(ByteBuf out) {
            Metadata.writeDescription(out, description);
        }

        public static Response decode(ByteBuf in, String name) {
            return new Response(Metadata.readDescription(in, name));
        }
    }
}
