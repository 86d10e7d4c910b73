package dev.tokengap;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The package rules of style.md: dependencies point one way, and the pure packages stay pure.
 */
class ArchitectureTests {

	static final JavaClasses CLASSES = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.tokengap");

	@Test
	void sseAndTimingArePureJava() {
		classes().that()
			.resideInAnyPackage("dev.tokengap.sse..", "dev.tokengap.timing..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "dev.tokengap.sse..", "dev.tokengap.timing..")
			.check(CLASSES);
	}

	@Test
	void nothingDependsOnConfigOrProxy() {
		noClasses().that()
			.resideOutsideOfPackages("dev.tokengap.config..", "dev.tokengap.proxy..", "dev.tokengap")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.tokengap.config..", "dev.tokengap.proxy..")
			.check(CLASSES);
	}

	@Test
	void theHotPathDoesNotDependOnAttributionOrTheEngineScrape() {
		noClasses().that()
			.resideInAnyPackage("dev.tokengap.proxy..", "dev.tokengap.sse..", "dev.tokengap.timing..",
					"dev.tokengap.metrics..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.tokengap.attribution..", "dev.tokengap.backend..", "dev.tokengap.sim..")
			.check(CLASSES);
	}

}
