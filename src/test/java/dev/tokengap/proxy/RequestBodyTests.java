package dev.tokengap.proxy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request body gathered whole: one piece is passed on as it is, several become one
 * composite, and whatever ends the read early releases every piece held, exactly once.
 * The source releases each piece after passing it on, as Reactor Netty's does.
 */
class RequestBodyTests {

	private final EmbeddedChannel channel = new EmbeddedChannel();

	@AfterEach
	void close() {
		this.channel.close();
	}

	@Test
	void aBodyInOnePieceIsThatPiece() {
		ByteBuf piece = buffer("{\"model\":\"m\"}");
		ByteBuf body = new RequestBody(source(piece), this.channel, 1024).block();
		assertThat(body).isNotInstanceOf(CompositeByteBuf.class);
		assertThat(body.toString(StandardCharsets.UTF_8)).isEqualTo("{\"model\":\"m\"}");
		assertThat(piece.refCnt()).isEqualTo(1);
		body.release();
		assertThat(piece.refCnt()).isZero();
	}

	@Test
	void aBodyInSeveralPiecesIsOneCompositeOfThemAll() {
		List<ByteBuf> pieces = List.of(buffer("{\"model\":"), buffer("\"m\","), buffer("\"stream\":true}"));
		ByteBuf body = new RequestBody(source(pieces.toArray(ByteBuf[]::new)), this.channel, 1024).block();
		assertThat(body).isInstanceOf(CompositeByteBuf.class);
		assertThat(body.toString(StandardCharsets.UTF_8)).isEqualTo("{\"model\":\"m\",\"stream\":true}");
		body.release();
		assertThat(pieces).allSatisfy((piece) -> assertThat(piece.refCnt()).isZero());
	}

	@Test
	void piecesMayBeTheDecodersHttpContents() {
		ByteBuf first = buffer("{\"model\":");
		ByteBuf last = buffer("\"m\"}");
		Flux<Object> contents = Flux.create((sink) -> {
			for (HttpContent content : List.of(new DefaultHttpContent(first), new DefaultLastHttpContent(last))) {
				sink.next(content);
				content.release();
			}
			sink.complete();
		});
		ByteBuf body = new RequestBody(contents, this.channel, 1024).block();
		assertThat(body.toString(StandardCharsets.UTF_8)).isEqualTo("{\"model\":\"m\"}");
		body.release();
		assertThat(first.refCnt()).isZero();
		assertThat(last.refCnt()).isZero();
	}

	@Test
	void aPieceThatIsNotBytesFailsTheBody() {
		ByteBuf first = buffer("{\"model\":");
		Flux<Object> pieces = Flux.create((sink) -> {
			sink.next(first);
			first.release();
			sink.next("text");
			sink.complete();
		});
		StepVerifier.create(new RequestBody(pieces, this.channel, 1024))
			.expectErrorMessage("a request body piece that is not bytes: java.lang.String")
			.verify();
		assertThat(first.refCnt()).isZero();
	}

	@Test
	void anEmptyBodyIsAnEmptyBuffer() {
		ByteBuf body = new RequestBody(Flux.empty(), this.channel, 1024).block();
		assertThat(body.isReadable()).isFalse();
	}

	@Test
	void aBodyOverTheLimitFailsAndReleasesWhatWasGathered() {
		ByteBuf first = buffer("0123456789");
		ByteBuf second = buffer("0123456789");
		AtomicBoolean cancelled = new AtomicBoolean();
		StepVerifier
			.create(new RequestBody(source(first, second).doOnCancel(() -> cancelled.set(true)), this.channel, 15))
			.expectError(RequestBodyTooLargeException.class)
			.verify();
		assertThat(cancelled).isTrue();
		assertThat(first.refCnt()).isZero();
		assertThat(second.refCnt()).isZero();
	}

	@Test
	void aBodyExactlyAtTheLimitPasses() {
		ByteBuf body = new RequestBody(source(buffer("01234"), buffer("56789")), this.channel, 10).block();
		assertThat(body.readableBytes()).isEqualTo(10);
		body.release();
	}

	@Test
	void anErrorReleasesWhatWasGathered() {
		ByteBuf first = buffer("{\"model\":");
		ByteBuf second = buffer("\"m\"");
		Sinks.Many<ByteBuf> sink = Sinks.many().unicast().onBackpressureBuffer();
		StepVerifier.create(new RequestBody(sink.asFlux(), this.channel, 1024)).then(() -> {
			sink.tryEmitNext(first);
			first.release();
			sink.tryEmitNext(second);
			second.release();
			sink.tryEmitError(new IllegalStateException("connection reset"));
		}).expectErrorMessage("connection reset").verify();
		assertThat(first.refCnt()).isZero();
		assertThat(second.refCnt()).isZero();
	}

	@Test
	void aCancelReleasesWhatWasGathered() {
		ByteBuf first = buffer("{\"model\":");
		AtomicBoolean cancelled = new AtomicBoolean();
		Sinks.Many<ByteBuf> sink = Sinks.many().unicast().onBackpressureBuffer();
		StepVerifier.create(new RequestBody(sink.asFlux().doOnCancel(() -> cancelled.set(true)), this.channel, 1024))
			.then(() -> {
				sink.tryEmitNext(first);
				first.release();
			})
			.thenCancel()
			.verify();
		assertThat(cancelled).isTrue();
		assertThat(first.refCnt()).isZero();
	}

	@Test
	void aBodyWhoseFramingBrokeIsNeverPassedOn() {
		// The request's head went by, its last piece never will: Reactor Netty ended the
		// body when its framing broke.
		this.channel.pipeline().addLast(new StrictRequestHandler());
		this.channel.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/completions"));
		assertThat((Object) this.channel.readInbound()).isInstanceOf(HttpRequest.class);
		ByteBuf first = buffer("{\"model\":");
		StepVerifier.create(new RequestBody(source(first), this.channel, 1024))
			.expectError(RequestBodyDecodingException.class)
			.verify();
		assertThat(first.refCnt()).isZero();
	}

	@Test
	void aBodyThatCompletesBeforeItIsAskedForWaitsForTheRequest() {
		List<String> signals = new CopyOnWriteArrayList<>();
		AtomicReference<Subscription> subscription = new AtomicReference<>();
		new RequestBody(Flux.empty(), this.channel, 1024).subscribe(new CoreSubscriber<ByteBuf>() {

			@Override
			public void onSubscribe(Subscription s) {
				subscription.set(s);
			}

			@Override
			public void onNext(ByteBuf body) {
				signals.add("body of " + body.readableBytes());
				body.release();
			}

			@Override
			public void onError(Throwable error) {
				signals.add("error");
			}

			@Override
			public void onComplete() {
				signals.add("complete");
			}

		});
		assertThat(signals).as("nothing before the request").isEmpty();
		subscription.get().request(1);
		assertThat(signals).containsExactly("body of 0", "complete");
	}

	@Test
	void aRequestForNoElementsFailsTheReadAndReleasesWhatWasGathered() {
		ByteBuf first = buffer("{\"model\":");
		AtomicBoolean cancelled = new AtomicBoolean();
		Sinks.Many<ByteBuf> sink = Sinks.many().unicast().onBackpressureBuffer();
		AtomicReference<Throwable> failed = new AtomicReference<>();
		AtomicReference<Subscription> subscription = new AtomicReference<>();
		new RequestBody(sink.asFlux().doOnCancel(() -> cancelled.set(true)), this.channel, 1024)
			.subscribe(new CoreSubscriber<ByteBuf>() {

				@Override
				public void onSubscribe(Subscription s) {
					subscription.set(s);
					s.request(1);
				}

				@Override
				public void onNext(ByteBuf body) {
					body.release();
				}

				@Override
				public void onError(Throwable error) {
					failed.set(error);
				}

				@Override
				public void onComplete() {
				}

			});
		sink.tryEmitNext(first);
		first.release();
		subscription.get().request(0);
		assertThat(failed.get()).isInstanceOf(IllegalArgumentException.class);
		assertThat(cancelled).isTrue();
		assertThat(first.refCnt()).isZero();
	}

	/**
	 * Passes each piece on, then releases it: the piece is the subscriber's to retain.
	 */
	private static Flux<ByteBuf> source(ByteBuf... pieces) {
		return Flux.create((sink) -> {
			for (ByteBuf piece : pieces) {
				sink.next(piece);
				piece.release();
			}
			sink.complete();
		});
	}

	private static ByteBuf buffer(String text) {
		ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer();
		buf.writeCharSequence(text, StandardCharsets.UTF_8);
		return buf;
	}

}
