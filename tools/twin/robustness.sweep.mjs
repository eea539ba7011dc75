export { robustnessRows } from '@mnemo/twin';
