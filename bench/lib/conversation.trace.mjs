// Typed in @mnemo/testkit; this path stays for the bench scripts that import it.
export * from '@mnemo/testkit';
