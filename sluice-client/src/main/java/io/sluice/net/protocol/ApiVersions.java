package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * API_VERSIONS: which APIs and versions the server speaks. Always allowed, even before authentication.
 * <pre>
 * request:  (empty)
 * response: serverVersion string | apis array of  apiKey int16 | minVersion int16 | maxVersion int16
 * </pre>
 */
public final class ApiVersions {
    private ApiVersions() {
    }

    public record Range(short apiKey, short minVersion, short maxVersion) {
    }

    public record Response(String serverVersion, List<Range> apis) {
        public static Response current(String serverVersion) {
            List<Range> apis = new ArrayList<>();
            for (ApiKey k : ApiKey.values()) {
                apis.add(new Range(k.id, k.minVersion, k.maxVersion));
            }
            return new Response(serverVersion, apis);
        }

        public void encode(ByteBuf out) {
            Wire.writeString(out, serverVersion);
            out.writeInt(apis.size());
            for (Range r : apis) {
                out.writeShort(r.apiKey());
                out.writeShort(r.minVersion());
                out.writeShort(r.maxVersion());
            }
        }

        public static Response decode(ByteBuf in) {
            String version = Wire.readString(in);
            int count = Wire.readCount(in, 6, "api");
            List<Range> apis = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                apis.add(new Range(Wire.readShort(in), Wire.readShort(in), Wire.readShort(in)));
            }
            return new Response(version, apis);
        }
    }
}
