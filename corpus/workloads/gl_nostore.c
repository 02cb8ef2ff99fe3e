/* gl_nostore.c - vgtrace corpus workload: OpenGL ES draws that store nothing, each for one known reason,
 * beside normal draws that store. OpenGL ES 3 through EGL on a 64x64 pbuffer (display as in gl_egl.c).
 * Every case clears to opaque black, draws the gl_egl triangle, reads the pixels back (glReadPixels: the
 * driver submits the work) and checks them:
 *   normal           the triangle (stores)
 *   write_mask_zero  glColorMask(0, 0, 0, 0)                   -> `vgt draws`: write_mask_zero
 *   discard          a fragment shader that discards all       -> sph_no_outputs (or the SPH's kills_pixels)
 *   raster_off       glEnable(GL_RASTERIZER_DISCARD)           -> stage_disabled (SET_RASTER_ENABLE 0)
 *   scissor_zero     glEnable(GL_SCISSOR_TEST), glScissor 0x0  -> scissor_zero
 *   normal_again     the triangle (stores)
 * The clear of each case happens with the case's state undone (a clear honours the color mask, the
 * scissor and rasterizer discard), so only the draw differs.
 * Prints: INFO lines, then RESULT gl_nostore ok cases=6 stored=2 covered=<pixels of a normal draw>
 * hash=<fnv1a64 of the last image>; exit 0, or 1 (FAIL on stderr). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include "wl_common.h"

#define W 64
#define H 64

static void fail(const char *msg)
{
    fprintf(stderr, "FAIL gl_nostore: %s (eglGetError=0x%04x)\n", msg, (unsigned)eglGetError());
    exit(1);
}

static EGLDisplay open_display(const char **how)
{
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLQUERYDEVICESEXTPROC query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (cext && strstr(cext, "EGL_EXT_platform_device") && query_devices && get_platform_display) {
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (query_devices(16, devs, &n) && n > 0) {
            for (EGLint i = 0; i < n; i++) {
                EGLDisplay d = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
                EGLint maj, min;
                if (d != EGL_NO_DISPLAY && eglInitialize(d, &maj, &min)) {
                    static char buf[64];
                    snprintf(buf, sizeof(buf), "device%d/%d", (int)i, (int)n);
                    *how = buf;
                    return d;
                }
            }
        }
    }
    EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    EGLint maj, min;
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &maj, &min)) { *how = "default"; return d; }
    fail("no EGL display: neither an EGL device nor the default display initialized");
    return EGL_NO_DISPLAY;
}

static GLuint compile(GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof(log), NULL, log);
        fprintf(stderr, "FAIL gl_nostore: shader compile: %s\n", log);
        exit(1);
    }
    return s;
}

static GLuint link(GLuint vs, GLuint fs)
{
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glBindAttribLocation(prog, 0, "pos");
    glBindAttribLocation(prog, 1, "col");
    glLinkProgram(prog);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) fail("program link");
    return prog;
}

enum { NORMAL, WRITE_MASK_ZERO, DISCARD, RASTER_OFF, SCISSOR_ZERO, NCASES };
static const char *const case_names[NCASES] = { "normal", "write_mask_zero", "discard", "raster_off", "scissor_zero" };

int main(void)
{
    const char *how = "";
    EGLDisplay dpy = open_display(&how);
    if (!eglBindAPI(EGL_OPENGL_ES_API)) fail("eglBindAPI(EGL_OPENGL_ES_API)");
    const EGLint cfg_attr[] = { EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                                EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE };
    EGLConfig cfgs[64], cfg = NULL;
    EGLint ncfg = 0;
    if (!eglChooseConfig(dpy, cfg_attr, cfgs, 64, &ncfg) || ncfg == 0) fail("no RGBA8 pbuffer ES3 config");
    for (EGLint i = 0; i < ncfg && !cfg; i++) {  /* prefer exactly RGBA8888 */
        EGLint r, g, b, a;
        eglGetConfigAttrib(dpy, cfgs[i], EGL_RED_SIZE, &r); eglGetConfigAttrib(dpy, cfgs[i], EGL_GREEN_SIZE, &g);
        eglGetConfigAttrib(dpy, cfgs[i], EGL_BLUE_SIZE, &b); eglGetConfigAttrib(dpy, cfgs[i], EGL_ALPHA_SIZE, &a);
        if (r == 8 && g == 8 && b == 8 && a == 8) cfg = cfgs[i];
    }
    if (!cfg) cfg = cfgs[0];
    const EGLint pb_attr[] = { EGL_WIDTH, W, EGL_HEIGHT, H, EGL_NONE };
    EGLSurface surf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    if (surf == EGL_NO_SURFACE) fail("eglCreatePbufferSurface");
    const EGLint ctx_attr[] = { EGL_CONTEXT_CLIENT_VERSION, 3, EGL_NONE };
    EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (ctx == EGL_NO_CONTEXT) fail("eglCreateContext");
    if (!eglMakeCurrent(dpy, surf, surf, ctx)) fail("eglMakeCurrent");
    printf("INFO gl_nostore display=%s vendor=\"%s\" renderer=\"%s\" version=\"%s\"\n", how,
           eglQueryString(dpy, EGL_VENDOR), (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION));

    GLuint vs = compile(GL_VERTEX_SHADER,
        "attribute vec2 pos;\nattribute vec3 col;\nvarying vec3 v;\n"
        "void main() { v = col; gl_Position = vec4(pos, 0.0, 1.0); }\n");
    GLuint prog = link(vs, compile(GL_FRAGMENT_SHADER,
        "precision mediump float;\nvarying vec3 v;\nvoid main() { gl_FragColor = vec4(v, 1.0); }\n"));
    GLuint prog_discard = link(vs, compile(GL_FRAGMENT_SHADER,
        "precision mediump float;\nvarying vec3 v;\nvoid main() { discard; }\n"));
    static const GLfloat pos[] = { 0.0f, 0.8f, 0.8f, -0.8f, -0.8f, -0.8f };
    static const GLfloat col[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    GLuint vbo[2];
    glGenBuffers(2, vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[0]);
    glBufferData(GL_ARRAY_BUFFER, sizeof(pos), pos, GL_STATIC_DRAW);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, 0);
    glBindBuffer(GL_ARRAY_BUFFER, vbo[1]);
    glBufferData(GL_ARRAY_BUFFER, sizeof(col), col, GL_STATIC_DRAW);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, 0);
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);

    glViewport(0, 0, W, H);
    glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    static unsigned char pixels[W * H * 4];
    static const unsigned char black[4] = { 0, 0, 0, 255 };
    const int order[] = { NORMAL, WRITE_MASK_ZERO, DISCARD, RASTER_OFF, SCISSOR_ZERO, NORMAL };
    unsigned stored = 0, normal_covered = 0;
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
        int k = order[i];
        glClear(GL_COLOR_BUFFER_BIT);
        glUseProgram(k == DISCARD ? prog_discard : prog);
        if (k == WRITE_MASK_ZERO) glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
        if (k == RASTER_OFF) glEnable(GL_RASTERIZER_DISCARD);
        if (k == SCISSOR_ZERO) glEnable(GL_SCISSOR_TEST), glScissor(0, 0, 0, 0);
        glDrawArrays(GL_TRIANGLES, 0, 3);
        glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        glDisable(GL_RASTERIZER_DISCARD);
        glDisable(GL_SCISSOR_TEST);
        glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
        GLenum err = glGetError();
        if (err != GL_NO_ERROR) {
            fprintf(stderr, "FAIL gl_nostore: GL error 0x%04x in case %s\n", (unsigned)err, case_names[k]);
            return 1;
        }
        unsigned covered = 0;
        for (int p = 0; p < W * H; p++) {
            if (pixels[p * 4 + 3] != 255) fail("pixel is not opaque");
            if (memcmp(pixels + p * 4, black, 4) != 0) covered++;
        }
        printf("INFO gl_nostore case=%s covered=%u\n", case_names[k], covered);
        if (k == NORMAL) {
            if (covered < W * H / 4 || covered > W * H * 3 / 4) fail("a normal draw stored an implausible pixel count");
            if (normal_covered && covered != normal_covered) fail("the two normal draws differ");
            normal_covered = covered;
            stored++;
        } else if (covered != 0) {
            fprintf(stderr, "FAIL gl_nostore: case %s stored %u pixels, expected none\n", case_names[k], covered);
            return 1;
        }
    }
    uint64_t h = wl_fnv1a64(pixels, sizeof(pixels));

    glDeleteBuffers(2, vbo);
    glDeleteProgram(prog);
    glDeleteProgram(prog_discard);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglDestroySurface(dpy, surf);
    eglTerminate(dpy);
    printf("RESULT gl_nostore ok cases=%u stored=%u covered=%u hash=%016llx\n",
           (unsigned)(sizeof order / sizeof order[0]), stored, normal_covered, (unsigned long long)h);
    return 0;
}
