/** Stylesheets imported for their side effect: Bun's bundler puts them in the console's CSS. */
declare module '*.css' {}
