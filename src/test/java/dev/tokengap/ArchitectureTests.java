package dev.tokengap;

import java.util.Set;
import java.util.stream.Collectors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.conditions.ArchConditions.have;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The package rules of CONTRIBUTING.md, checked on the production classes:
 * <ul>
 * <li>no cycles between the packages under {@code dev.tokengap};</li>
 * <li>{@code sse} and {@code timing} are pure Java: they use only the JDK and each
 * other;</li>
 * <li>nothing depends on {@code config} (wiring) or {@code proxy} but they and the entry
 * point;</li>
 * <li>the hot path ({@code proxy}, {@code sse}, {@code timing}, {@code metrics}) does not
 * depend on {@code attribution}, {@code backend} or {@code sim};</li>
 * <li>{@code sim} is used only by {@code config};</li>
 * <li>{@code bench} is used only by the entry point, {@link TokengapApplication};</li>
 * <li>{@code client} depends on no other tokengap package.</li>
 * </ul>
 * And the overhead benchmark's lab harness ({@code dev.tokengap.lab}, test sources) stays
 * out of the jar: no production class is in its package, has the name of one of its
 * classes or uses them. That rule takes the harness's class names from the test classes,
 * and is shown to fire on the harness itself.
 */
class ArchitectureTests {

	static final JavaClasses CLASSES = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.tokengap");

	static final JavaClasses LAB = new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
		.importPackages("dev.tokengap.lab");

	@Test
	void packagesAreFreeOfCycles() {
		slices().matching("dev.tokengap.(*)..").should().beFreeOfCycles().check(CLASSES);
	}

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

	@Test
	void theSimulatorIsUsedOnlyByTheWiring() {
		classes().that()
			.resideInAPackage("dev.tokengap.sim..")
			.should()
			.onlyHaveDependentClassesThat()
			.resideInAnyPackage("dev.tokengap.config..", "dev.tokengap.sim..")
			.check(CLASSES);
	}

	@Test
	void theBenchCommandIsUsedOnlyByTheEntryPoint() {
		classes().that()
			.resideInAPackage("dev.tokengap.bench..")
			.should()
			.onlyHaveDependentClassesThat(
					resideInAPackage("dev.tokengap.bench..").or(equivalentTo(TokengapApplication.class)))
			.check(CLASSES);
	}

	@Test
	void theClientSetupDependsOnNoOtherTokengapPackage() {
		noClasses().that()
			.resideInAPackage("dev.tokengap.client..")
			.should()
			.dependOnClassesThat(
					resideInAPackage("dev.tokengap..").and(resideOutsideOfPackage("dev.tokengap.client..")))
			.check(CLASSES);
	}

	@Test
	void theLabHarnessStaysOutOfTheJar() {
		Set<String> names = LAB.stream()
			.filter(JavaClass::isTopLevelClass)
			.map(JavaClass::getSimpleName)
			.filter((name) -> !name.equals("package-info"))
			.collect(Collectors.toSet());
		assertThat(names).as("the lab harness's classes, imported from the test classes")
			.contains("OverheadProbe", "StampedSseBackend");
		ArchRule rule = noClasses().should()
			.resideInAPackage("dev.tokengap.lab..")
			.orShould(have(simpleNameIn(names)))
			.orShould()
			.dependOnClassesThat()
			.resideInAPackage("dev.tokengap.lab..");
		rule.check(CLASSES);
		assertThatExceptionOfType(AssertionError.class).as("the rule fires on the harness itself")
			.isThrownBy(() -> rule.check(LAB));
	}

	private static DescribedPredicate<JavaClass> simpleNameIn(Set<String> names) {
		return DescribedPredicate.describe("a simple name of the lab harness " + names,
				(javaClass) -> names.contains(javaClass.getSimpleName()));
	}

}
