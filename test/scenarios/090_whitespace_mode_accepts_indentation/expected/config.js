module.exports = {
  debug: true,
  port: 8080,
};
