package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request scanner against a real JSON parser: on every well-formed body both must
 * find the same model, stream flag and include_usage, whatever else the body holds and
 * however its bytes are split into buffers.
 */
class RequestFactsTests {

	private static final List<String> BODIES = List.of("{\"model\":\"m\",\"stream\":true}",
			"{\"messages\":[{\"role\":\"user\",\"content\":\"hi \\\"there\\\" {[}]\"}],\"model\":\"meta-llama/Llama-3.1-8B\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
			" \n{ \"stream\" : false , \"model\" : \"a\\u00e9\\n\\\\b\" }\n",
			"{\"model\":\"\\ud83d\\ude00 emoji\",\"stream\":true}", "{\"model\":\"Qwen/Qwen3-8B\",\"stream\":\"true\"}",
			"{\"model\":null,\"stream\":1}", "{\"model\":42,\"stream\":true,\"stream_options\":null}",
			"{\"model\":{\"nested\":\"x\"},\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true,\"include_usage\":false}}",
			"{\"stream_options\":{\"include_usage\":true,\"x\":[1,2,{\"a\":\"]\"}]},\"stream\":true}",
			"{\"model\":\"first\",\"model\":\"second\",\"stream\":true,\"stream\":false}",
			"{\"temperature\":0.7,\"top_p\":1e-3,\"max_tokens\":-12,\"logit_bias\":{},\"stop\":[],\"model\":\"m\",\"stream\":true}",
			"{\"prompt\":\"\\\\\",\"model\":\"ends with backslash\\\\\",\"stream\":true}",
			"{\"model\":\"日本語モデル\",\"input\":\"text\",\"stream\":true}", "{}", "[]", "[{\"model\":\"in an array\"}]",
			"\"a string\"", "42", "null");

	private static final List<String> MALFORMED = List.of("", "   ", "{", "{\"model\"", "{\"model\":",
			"{\"model\":\"unterminated", "{\"model\" \"m\"}", "{\"stream\":true,}", "{\"stream\":}",
			"{\"messages\":[{\"a\":1}", "{model:\"m\"}", "{\"model\":\"bad escape \\q\"}",
			"{\"model\":\"short \\u12\"}", "not json at all");

	@Test
	void findsWhatAJsonParserFinds() {
		for (String body : BODIES) {
			assertThat(RequestFacts.of(buf(body))).as(body).isEqualTo(jackson(body));
		}
	}

	@Test
	void malformedBodiesYieldNothing() {
		for (String body : MALFORMED) {
			assertThat(RequestFacts.of(buf(body))).as(body).isEqualTo(RequestFacts.NONE);
		}
	}

	@Test
	void readsAcrossBufferBoundariesAtEverySplit() {
		for (String body : BODIES) {
			byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
			for (int split = 1; split < bytes.length; split++) {
				CompositeByteBuf composite = Unpooled.compositeBuffer();
				composite.addComponent(true, Unpooled.wrappedBuffer(bytes, 0, split));
				composite.addComponent(true, Unpooled.wrappedBuffer(bytes, split, bytes.length - split));
				assertThat(RequestFacts.of(composite)).as("%s split at %d", body, split).isEqualTo(jackson(body));
			}
		}
	}

	@Test
	void doesNotConsumeTheBody() {
		ByteBuf body = buf("{\"model\":\"m\",\"stream\":true}");
		int readable = body.readableBytes();
		RequestFacts.of(body);
		assertThat(body.readableBytes()).isEqualTo(readable);
	}

	@Test
	void agreesWithAJsonParserOnRandomRequests() {
		Random random = new Random(13);
		for (int i = 0; i < 2_000; i++) {
			String body = randomRequest(random);
			assertThat(RequestFacts.of(buf(body))).as(body).isEqualTo(jackson(body));
		}
	}

	@Test
	void skipsALargePromptWithoutLosingTheKeysAfterIt() {
		StringBuilder prompt = new StringBuilder();
		while (prompt.length() < 4 << 20) {
			prompt.append("Tell me about \\\"caching\\\" {and [brackets]} in strings. ");
		}
		String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt
				+ "\"}],\"model\":\"big\",\"stream\":true," + "\"stream_options\":{\"include_usage\":true}}";
		assertThat(RequestFacts.of(buf(body))).isEqualTo(new RequestFacts("big", true, true));
	}

	private static String randomRequest(Random random) {
		StringBuilder json = new StringBuilder("{");
		int members = random.nextInt(6);
		for (int m = 0; m < members; m++) {
			if (m > 0) {
				json.append(',');
			}
			json.append(space(random));
			String key = switch (random.nextInt(6)) {
				case 0 -> "model";
				case 1 -> "stream";
				case 2 -> "stream_options";
				case 3 -> "include_usage";
				default -> "k" + random.nextInt(3);
			};
			json.append('"').append(key).append('"').append(space(random)).append(':').append(space(random));
			json.append(randomValue(random, 0)).append(space(random));
		}
		return json.append('}').toString();
	}

	private static String randomValue(Random random, int depth) {
		int kind = random.nextInt((depth > 3) ? 5 : 7);
		return switch (kind) {
			case 0 -> "true";
			case 1 -> "false";
			case 2 -> "null";
			case 3 -> Integer.toString(random.nextInt(2000) - 1000);
			case 4 -> '"' + randomString(random) + '"';
			case 5 -> {
				StringBuilder array = new StringBuilder("[");
				int n = random.nextInt(4);
				for (int i = 0; i < n; i++) {
					array.append((i > 0) ? "," : "").append(space(random)).append(randomValue(random, depth + 1));
				}
				yield array.append(']').toString();
			}
			default -> {
				StringBuilder object = new StringBuilder("{");
				int n = random.nextInt(4);
				for (int i = 0; i < n; i++) {
					String key = (random.nextBoolean()) ? "include_usage" : "model";
					object.append((i > 0) ? "," : "")
						.append('"')
						.append(key)
						.append("\":")
						.append(randomValue(random, depth + 1));
				}
				yield object.append('}').toString();
			}
		};
	}

	private static String randomString(Random random) {
		String[] pieces = { "a", "Z", " ", "{", "}", "[", "]", ",", ":", "\\\"", "\\\\", "\\n", "\\u00e9", "é", "模型",
				"/" };
		StringBuilder text = new StringBuilder();
		int n = random.nextInt(8);
		for (int i = 0; i < n; i++) {
			text.append(pieces[random.nextInt(pieces.length)]);
		}
		return text.toString();
	}

	private static String space(Random random) {
		return switch (random.nextInt(5)) {
			case 0 -> " ";
			case 1 -> "\n  ";
			default -> "";
		};
	}

	private static ByteBuf buf(String body) {
		return Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8));
	}

	private static RequestFacts jackson(String body) {
		return JacksonFacts.of(buf(body));
	}

}
