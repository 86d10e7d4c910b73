package dev.tokengap.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

import io.netty.handler.codec.http.multipart.Attribute;
import io.netty.handler.codec.http.multipart.FileUpload;
import io.netty.handler.codec.http.multipart.HttpData;

/**
 * The fields of an audio request's {@code multipart/form-data} body that the simulator
 * acts on: the text fields by name, and the uploaded file's name and size (its bytes are
 * never kept).
 */
final class AudioForm {

	private final Map<String, String> fields = new HashMap<>();

	private String fileName;

	private long fileBytes = -1;

	/**
	 * Reads one part while the decoder still holds it: Reactor Netty releases the parts
	 * when the form ends.
	 */
	AudioForm add(HttpData data) {
		try {
			if (data instanceof FileUpload file) {
				this.fileName = file.getFilename();
				this.fileBytes = file.length();
			}
			else if (data instanceof Attribute attribute) {
				this.fields.put(attribute.getName(), attribute.getValue());
			}
			return this;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	String field(String name) {
		return this.fields.get(name);
	}

	boolean flag(String name) {
		String value = this.fields.get(name);
		if (value == null || value.equalsIgnoreCase("false")) {
			return false;
		}
		if (value.equalsIgnoreCase("true")) {
			return true;
		}
		throw InvalidRequestException.badRequest(name + " must be a boolean");
	}

	boolean hasFile() {
		return this.fileBytes >= 0;
	}

	String fileName() {
		return this.fileName;
	}

	long fileBytes() {
		return this.fileBytes;
	}

}
