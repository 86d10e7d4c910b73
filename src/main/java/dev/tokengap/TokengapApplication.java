package dev.tokengap;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class TokengapApplication {

	public static void main(String[] args) {
		SpringApplication.run(TokengapApplication.class, args);
	}

}
