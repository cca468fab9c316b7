/**
 * Kysely as both services load it: bundled into one module by `npm run build`
 * (`scripts/bundle-libraries.mjs`), imported as `@rd/common/kysely`. Kysely's ESM build is 279
 * small modules, which Node holds one by one (the reason is TypeBox's too: `typebox.ts`).
 * Nothing at run time may import `kysely` directly (the idle memory tests check a boot).
 */
export * from "kysely";
